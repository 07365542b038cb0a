// A bucket in a local directory (the default backend; also what tests and the
// single-process mode use). Writes go to a hidden temporary file in the same
// directory, are fsynced, then renamed over the key: a reader never sees half
// an object. Deletes prune directories left empty, as Thanos' does.

import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, open, readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { dirPrefix, isFileBody, type Bucket, type ListOptions, type ObjectAttributes, type PutBody } from './bucket.ts';
import { InvalidObjectKeyError, ObjectNotFoundError } from './errors.ts';

const TMP_PREFIX = '.tmp-';

export class FilesystemBucket implements Bucket {
  readonly name: string;
  private readonly root: string;

  constructor(dir: string) {
    this.root = resolve(dir);
    this.name = `filesystem:${this.root}`;
  }

  async get(key: string): Promise<Uint8Array> {
    try {
      const b = await readFile(this.path(key));
      return new Uint8Array(b.buffer, b.byteOffset, b.length);
    } catch (err) {
      throw this.wrap(err, key);
    }
  }

  async getRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    let fh;
    try {
      fh = await open(this.path(key), 'r');
    } catch (err) {
      throw this.wrap(err, key);
    }
    try {
      const buf = new Uint8Array(Math.max(0, length));
      let got = 0;
      while (got < length) {
        const { bytesRead } = await fh.read(buf, got, length - got, offset + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return got === length ? buf : buf.subarray(0, got);
    } finally {
      await fh.close();
    }
  }

  async put(key: string, body: PutBody): Promise<void> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const tmp = join(dirname(path), `${TMP_PREFIX}${randomBytes(6).toString('hex')}`);
    try {
      if (isFileBody(body)) {
        await copyFile(body.file, tmp);
        const fh = await open(tmp, 'r+');
        await fh.sync().finally(() => fh.close());
      } else {
        const fh = await open(tmp, 'w');
        try {
          await fh.writeFile(body);
          await fh.sync();
        } finally {
          await fh.close();
        }
      }
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw err;
    }
    const dh = await open(dirname(path), 'r');
    await dh.sync().finally(() => dh.close());
  }

  async delete(key: string): Promise<void> {
    const path = this.path(key);
    await rm(path, { force: true });
    // Prune empty parents so listing never shows a deleted block as a directory.
    let dir = dirname(path);
    while (dir.length > this.root.length && dir.startsWith(this.root + sep)) {
      try {
        await rmdir(dir);
      } catch {
        break;
      }
      dir = dirname(dir);
    }
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<string[]> {
    const p = dirPrefix(prefix);
    const out: string[] = [];
    await this.walk(p, opts.recursive === true, out);
    return out.sort();
  }

  async exists(key: string): Promise<boolean> {
    try {
      return (await stat(this.path(key))).isFile();
    } catch {
      return false;
    }
  }

  async attributes(key: string): Promise<ObjectAttributes> {
    try {
      const s = await stat(this.path(key));
      if (!s.isFile()) throw new ObjectNotFoundError(this.name, key);
      return { size: s.size, lastModified: s.mtime };
    } catch (err) {
      throw this.wrap(err, key);
    }
  }

  async close(): Promise<void> {}

  private async walk(prefix: string, recursive: boolean, out: string[]): Promise<void> {
    let entries;
    try {
      entries = await readdir(prefix === '' ? this.root : this.path(prefix.slice(0, -1)), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name.startsWith(TMP_PREFIX)) continue;
      if (e.isDirectory()) {
        if (recursive) await this.walk(`${prefix}${e.name}/`, true, out);
        else out.push(`${prefix}${e.name}/`);
      } else if (e.isFile()) {
        out.push(prefix + e.name);
      }
    }
  }

  private path(key: string): string {
    if (key === '' || key.startsWith('/') || key.split('/').some((p) => p === '..' || p === '.' || p === '')) {
      throw new InvalidObjectKeyError(key, "keys are relative, '/'-separated, without empty, '.' or '..' parts");
    }
    return join(this.root, ...key.split('/'));
  }

  private wrap(err: unknown, key: string): Error {
    const code = (err as NodeJS.ErrnoException).code;
    if (err instanceof ObjectNotFoundError) return err;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return new ObjectNotFoundError(this.name, key);
    return err as Error;
  }
}
