/**
 * What the manifest proxy needs of squeeze breaks, answered from memory (docs/design.md §4, §6): given
 * a rewritten media playlist of an event's stream, the playlist with the break applied, or
 * undefined when no break touches the event (the common case, which costs one map lookup).
 */
/**
 * What a segment URI of a viewer's playlist is to a break (issue 30.2): `true`, content on the
 * content origin, matched to a ready output by its path; `'timed'`, maybe content (a name the DAI
 * host's variant gives relative to itself, so it resolves on the DAI host): matched by its path
 * only when the output's time agrees with the segment's too; `false`, never squeezed (ads).
 */
export type ContentKind = boolean | 'timed';

export interface BreakSource {
  /** Bumped whenever any break or ready output changes, so cached renderings are not reused. */
  readonly generation: number;
  /** `flow`: squeezeback-flow players fire their own beacons from /vast; DAI streams' are fired by the service. */
  apply(
    text: string,
    eventId: number,
    streamId: string | undefined,
    isContent: (uri: string) => ContentKind,
    flow?: 'dai' | 'squeezeback',
  ): string | undefined;
  /**
   * What decides a stream's rendering of the event's playlists: '' when no break touches the event,
   * else the assignments its breaks give the stream. Streams with the same key get the same text.
   */
  renderKey(eventId: number, streamId: string): string;
}
