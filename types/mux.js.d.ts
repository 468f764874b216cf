// The small part of mux.js 7.1.0 lib/id3 uses: the MPEG-TS packet → PES pipeline and PTS rollover.
declare module 'mux.js/lib/m2ts/m2ts.js' {
  interface MuxStream<In, Out> {
    push(data: In): void;
    flush(): void;
    on(type: 'data', listener: (data: Out) => void): void;
  }
  /** A parsed TS packet (TransportParseStream output). */
  export interface TsPacketEvent {
    type: 'pat' | 'pmt' | 'pes';
    pid: number;
    payloadUnitStartIndicator: boolean;
    streamType?: number;
    data?: Uint8Array;
  }
  /** ElementaryStream output: a reassembled PES (type 'timed-metadata' for stream type 0x15). */
  export interface PesEvent {
    type: string;
    trackId?: number;
    pts?: number;
    dts?: number;
    dataAlignmentIndicator?: boolean;
    data?: Uint8Array;
  }
  const m2ts: {
    METADATA_STREAM_TYPE: number;
    TransportPacketStream: new () => MuxStream<Uint8Array, Uint8Array>;
    TransportParseStream: new () => MuxStream<Uint8Array, TsPacketEvent>;
    ElementaryStream: new () => MuxStream<TsPacketEvent, PesEvent>;
  };
  export default m2ts;
}

declare module 'mux.js/lib/m2ts/timestamp-rollover-stream.js' {
  /** `value` moved by multiples of 2^33 to within 2^32 of `reference` (33-bit PTS wrap). */
  export function handleRollover(value: number, reference: number): number;
}
