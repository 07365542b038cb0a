// A container in Azure Blob Storage (or Azurite) through @azure/storage-blob, reached with a
// connection string, a shared key, or (neither given) the pod's managed or workload identity,
// as Mimir's Azure client chooses. Uploads are block blobs: the SDK stages blocks and commits
// the list last, so a reader sees the old blob or the new one, never a part.

import { DefaultAzureCredential, ManagedIdentityCredential, type TokenCredential } from '@azure/identity';
import { StorageSharedKeyCredential, ContainerClient, type ContainerClient as AzureContainerClient, type StoragePipelineOptions } from '@azure/storage-blob';
import { dirPrefix, isFileBody, type Bucket, type ListOptions, type ObjectAttributes, type PutBody } from './bucket.ts';
import { BucketConfigError, ObjectNotFoundError, foundByAttributes } from './errors.ts';

export interface AzureBucketOptions {
  accountName: string;
  /** Shared-key auth; '' (and no connection string): a managed or workload identity. */
  accountKey: string;
  /** Replaces the account name, key and endpoint when set. */
  connectionString: string;
  /** The user-assigned managed identity's client id; '': the default credential chain. */
  userAssignedId: string;
  containerName: string;
  /** Host suffix after `<account>.`; '' for blob.core.windows.net. */
  endpointSuffix: string;
  /** A full URL of the blob service (http://127.0.0.1:10000/devstoreaccount1) for an emulator or private endpoint; overrides the suffix. */
  endpoint: string;
  /** Attempts per request, with exponential backoff. */
  maxRetries: number;
}

export class AzureBucket implements Bucket {
  readonly name: string;
  private readonly container: AzureContainerClient;

  constructor(opts: AzureBucketOptions) {
    const options: StoragePipelineOptions = { retryOptions: { maxTries: Math.max(1, opts.maxRetries) } };
    if (opts.connectionString !== '') {
      this.container = containerFromConnectionString(opts.connectionString, opts.containerName, options);
      this.name = `azure://${this.container.accountName}/${opts.containerName}`;
      return;
    }
    const service = opts.endpoint !== '' ? opts.endpoint.replace(/\/+$/, '') : `https://${opts.accountName}.${opts.endpointSuffix || 'blob.core.windows.net'}`;
    this.name = `azure://${opts.accountName}/${opts.containerName}`;
    this.container = new ContainerClient(`${service}/${opts.containerName}`, credentialOf(opts), options);
  }

  async get(key: string): Promise<Uint8Array> {
    try {
      return toBytes(await this.container.getBlockBlobClient(key).downloadToBuffer());
    } catch (err) {
      throw this.mapError(err, key);
    }
  }

  async getRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) {
      await this.attributes(key);
      return new Uint8Array(0);
    }
    try {
      const res = await this.container.getBlockBlobClient(key).download(offset, length);
      const chunks: Buffer[] = [];
      for await (const c of res.readableStreamBody ?? []) chunks.push(c as Buffer);
      return toBytes(Buffer.concat(chunks));
    } catch (err) {
      // Asking past the end of an object is not an error for us: fewer (no) bytes.
      if (status(err) === 416) return new Uint8Array(0);
      throw this.mapError(err, key);
    }
  }

  async put(key: string, body: PutBody): Promise<void> {
    const blob = this.container.getBlockBlobClient(key);
    if (isFileBody(body)) await blob.uploadFile(body.file);
    else await blob.uploadData(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  }

  async delete(key: string): Promise<void> {
    await this.container.getBlockBlobClient(key).deleteIfExists();
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<string[]> {
    const p = dirPrefix(prefix);
    const out: string[] = [];
    if (opts.recursive) {
      for await (const b of this.container.listBlobsFlat({ prefix: p })) if (b.name !== p) out.push(b.name);
    } else {
      for await (const item of this.container.listBlobsByHierarchy('/', { prefix: p })) if (item.name !== p) out.push(item.name);
    }
    return out.sort();
  }

  exists(key: string): Promise<boolean> {
    return foundByAttributes(this, key);
  }

  async attributes(key: string): Promise<ObjectAttributes> {
    try {
      const p = await this.container.getBlockBlobClient(key).getProperties();
      return { size: p.contentLength ?? 0, lastModified: p.lastModified ?? new Date(0) };
    } catch (err) {
      throw this.mapError(err, key);
    }
  }

  async close(): Promise<void> {
    // The SDK holds no connections beyond the agent's keep-alive sockets.
  }

  private mapError(err: unknown, key: string): unknown {
    return status(err) === 404 ? new ObjectNotFoundError(this.name, key) : err;
  }
}

function toBytes(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function status(err: unknown): number | undefined {
  return (err as { statusCode?: number }).statusCode;
}

/** The account key when given; else a user-assigned managed identity, or the default chain (workload identity, managed identity, ...). */
function credentialOf(opts: AzureBucketOptions): StorageSharedKeyCredential | TokenCredential {
  if (opts.accountKey !== '') return new StorageSharedKeyCredential(opts.accountName, opts.accountKey);
  if (opts.userAssignedId !== '') return new ManagedIdentityCredential({ clientId: opts.userAssignedId });
  return new DefaultAzureCredential();
}

function containerFromConnectionString(connectionString: string, containerName: string, options: StoragePipelineOptions): AzureContainerClient {
  try {
    return new ContainerClient(connectionString, containerName, options);
  } catch (err) {
    // The SDK's message quotes the string, key included: say only what is wrong.
    throw new BucketConfigError(`-blocks-storage.azure.connection-string is not an Azure storage connection string (${firstWords(err)})`);
  }
}

function firstWords(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split(/[:.]/)[0].slice(0, 80);
}
