export { compress, maxCompressedLength, uncompress, uncompressedLength } from './snappy.ts';
