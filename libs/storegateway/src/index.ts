export {
  META_FILE,
  DELETION_MARK_FILE,
  MARKERS_DIR,
  BUCKET_INDEX_FILE,
  blockPrefix,
  blockFileKey,
  bucketIndexKey,
  globalDeletionMarkKey,
  blockIdFromListing,
  tenantFromListing,
} from './layout.ts';
export { uploadBlock } from './block-upload.ts';
export type { UploadedBlock } from './block-upload.ts';
export { markForDeletion, readDeletionMarks, deleteBlock } from './markers.ts';
export type { DeletionMark } from './markers.ts';
export { readBucketIndex, writeBucketIndex, buildBucketIndex, scanTenantBlocks, indexBlockFromMeta, BucketIndexCorruptError } from './bucket-index.ts';
export type { BucketIndex, BucketIndexBlock, BucketIndexDeletionMark, TenantBlocksScan, BuildIndexOptions } from './bucket-index.ts';
export { BucketByteSource } from './bucket-byte-source.ts';
export { openBucketBlock } from './bucket-block.ts';
export { BucketStore } from './bucket-store.ts';
export type { BucketStoreOptions } from './bucket-store.ts';
export { bucketStoreConfigShape } from './config.ts';
export type { BucketStoreConfig } from './config.ts';
export {
  Deletions,
  DeletionFilterQuerier,
  readDeletionRequests,
  readTenantDeletionMark,
  writeTenantDeletionMark,
  tenantDeletionMarkKey,
  TOMBSTONES_DIR,
} from './deletion-requests.ts';
export type { DeletionRequest, TenantDeletionMark, DeletionsOptions } from './deletion-requests.ts';
