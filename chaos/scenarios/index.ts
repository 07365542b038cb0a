// Every drill scenario, in the order `npm run drill -- all` runs them.

import { brokerDown } from './broker-down.ts';
import { distributorKill } from './distributor-kill.ts';
import { ingesterKillMidFlush } from './ingester-kill-mid-flush.ts';
import { querierKill } from './querier-kill.ts';
import { redisDown } from './redis-down.ts';
import type { Scenario } from './scenario.ts';
import { zoneADown } from './zone-a-down.ts';
import { zoneRollingRestart } from './zone-rolling-restart.ts';

export const SCENARIOS: readonly Scenario[] = [zoneADown, brokerDown, redisDown, distributorKill, querierKill, ingesterKillMidFlush, zoneRollingRestart];

export function scenarioByName(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}

export type { Scenario } from './scenario.ts';
