import t from 'tap';
import {
  dashAdPod,
  dashPeriod,
  dashRendition,
  dashSegment,
  extractTags,
  hlsAdPod,
  hlsPlaylist,
  hlsRendition,
  hlsSegment,
  mpdEventTags,
  mpdEvents,
} from '../../lib/id3/index.js';
import { AOM_ID3, emsgV1, id3, txxx } from '../helpers/id3-writer.js';

t.test('DASH form exactly as the spec writes it (rendtions spelling kept)', async (t) => {
  const mpd = `<MPD><Period id="dai_pod-1-ad-1"><EventStream schemeIdUri="urn:google:dai:2018" timescale="1000"><Event presentationTime="120" messageData="google_777"/></EventStream></Period></MPD>`;
  const tags = mpdEventTags(mpdEvents(mpd)[0]!);
  const pod = dashAdPod(0, 12.5, [
    dashPeriod('dai_pod-1-ad-1', [dashRendition('video=2000000', [dashSegment('seg-1.m4s', tags)])]),
  ]);
  t.same(JSON.parse(JSON.stringify(pod)), {
    break: 0,
    start_time_sec: 12.5,
    dash: [
      {
        name: 'dai_pod-1-ad-1',
        rendtions: [
          {
            name: 'video=2000000',
            segments: [
              {
                name: 'seg-1.m4s',
                tags: [{ value: 'google_777', metadata: { timescale: 1000, presentation_time: 120 } }],
              },
            ],
          },
        ],
      },
    ],
  });
  t.same(
    Object.keys(pod.dash[0]!.rendtions[0]!.segments[0]!.tags[0]!),
    ['value', 'metadata'],
    'no optional keys when absent',
  );
});

t.test('HLS form: playlists, renditions with bandwidth, segments with sequence and error', async (t) => {
  const seg = emsgV1(AOM_ID3, '', 90000, 1800000, id3([txxx('id', 'ad-42')]));
  const tags = extractTags(seg).tags;
  const pod = hlsAdPod(1, 30, [
    hlsPlaylist('master.m3u8', [
      hlsRendition('v720.m3u8', [hlsSegment('s1.mp4', 100, tags), hlsSegment('s2.mp4', 101, [], 'HTTP 404')], 2500000),
      hlsRendition('audio.m3u8', []),
    ]),
  ]);
  t.same(pod, {
    break: 1,
    start_time_sec: 30,
    hls: [
      {
        name: 'master.m3u8',
        rendtions: [
          {
            name: 'v720.m3u8',
            bandwidth: 2500000,
            segments: [
              {
                name: 's1.mp4',
                sequence: 100,
                tags: [
                  {
                    value: 'ad-42',
                    metadata: { timescale: 90000, presentation_time: 1800000 },
                    frame: 'TXXX',
                    description: 'id',
                  },
                ],
              },
              { name: 's2.mp4', sequence: 101, tags: [], error: 'HTTP 404' },
            ],
          },
          { name: 'audio.m3u8', segments: [] },
        ],
      },
    ],
  });
});
