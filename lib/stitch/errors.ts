/**
 * A content manifest the stitcher cannot use (unparseable, over a cap, not VOD). The route answers
 * 422 for it: the asset is the problem, not the service, and nothing half-stitched is ever stored.
 * Ad manifests with the same faults only drop the ad (a warning).
 */
export class StitchError extends Error {
  override name = 'StitchError';
  constructor(
    readonly code: 'unparseable' | 'too-large' | 'not-vod' | 'unsupported',
    message: string,
  ) {
    super(message);
  }
}
