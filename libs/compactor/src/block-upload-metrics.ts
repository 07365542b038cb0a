// Metrics of the block-upload API (Mimir's cortex_block_upload_api_*, without the per-tenant label).

import { Counter, Gauge, type Registry } from 'prom-client';

export class BlockUploadMetrics {
  readonly blocks: Counter;
  readonly bytes: Counter;
  readonly files: Counter;
  readonly failed: Counter;

  constructor(registry: Registry | undefined, running: () => number) {
    const registers = registry ? [registry] : [];
    this.blocks = new Counter({ name: 'strata_block_upload_api_blocks_total', help: 'Blocks published through the block-upload API.', registers });
    this.bytes = new Counter({ name: 'strata_block_upload_api_bytes_total', help: 'Bytes of the blocks published through the block-upload API.', registers });
    this.files = new Counter({ name: 'strata_block_upload_api_files_total', help: 'Files of the blocks published through the block-upload API.', registers });
    this.failed = new Counter({
      name: 'strata_block_upload_validations_failed_total',
      help: 'Uploaded blocks refused by validation (the reason is in the log and in GET /check).',
      registers,
    });
    new Gauge({
      name: 'strata_block_upload_validations_in_progress',
      help: 'Uploaded blocks being validated now.',
      registers,
      collect() {
        this.set(running());
      },
    });
  }
}
