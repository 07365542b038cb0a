// Mimir's module registry in miniature: each module names the modules it
// needs; -target picks some, and they come out with their dependencies first.

export interface ModuleSpec {
  /** Modules this one needs; they are added to the target and come first. */
  deps?: readonly string[];
  /** Modules that, when they are in the target anyway, must come first (the querier uses an in-process ingester). */
  after?: readonly string[];
  /** Listed for -target but not meant to be named by users (the server, the bucket, ...). */
  internal?: boolean;
}

/** The modules to run for `targets`, each after everything it depends on. Throws on an unknown target. */
export function resolveModules(specs: Readonly<Record<string, ModuleSpec>>, targets: readonly string[]): string[] {
  const known = Object.keys(specs).filter((n) => !specs[n].internal);
  for (const t of targets) {
    if (!known.includes(t)) throw new Error(`unknown -target "${t}"; known targets: ${known.join(', ')}`);
  }
  const wanted = new Set<string>();
  const want = (name: string) => {
    if (wanted.has(name)) return;
    wanted.add(name);
    for (const d of specs[name].deps ?? []) want(d);
  };
  targets.forEach(want);
  const order: string[] = [];
  const visiting = new Set<string>();
  const visit = (name: string) => {
    if (order.includes(name)) return;
    if (visiting.has(name)) throw new Error(`module dependency cycle through "${name}"`);
    visiting.add(name);
    for (const d of [...(specs[name].deps ?? []), ...(specs[name].after ?? []).filter((a) => wanted.has(a))]) visit(d);
    visiting.delete(name);
    order.push(name);
  };
  for (const name of Object.keys(specs)) if (wanted.has(name)) visit(name);
  return order;
}
