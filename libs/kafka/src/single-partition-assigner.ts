// A kafkajs partition assigner that gives each member exactly the one partition it asks for
// (in its subscription metadata): kafkajs has no manual assignment, so an ingester joins a group
// of its own (group id = instance id) and assigns itself its partition through this.
import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';

export const SINGLE_PARTITION_PROTOCOL = 'strata-single-partition';

interface Wanted {
  partition: number;
}

export function singlePartitionAssigner(topic: string, partition: number): PartitionAssigner {
  return () => ({
    name: SINGLE_PARTITION_PROTOCOL,
    version: 1,
    protocol({ topics }) {
      const wanted: Wanted = { partition };
      return {
        name: SINGLE_PARTITION_PROTOCOL,
        metadata: AssignerProtocol.MemberMetadata.encode({
          version: 1,
          topics,
          userData: Buffer.from(JSON.stringify(wanted)),
        }),
      };
    },
    // Two live members asking for the same partition (two processes with one instance id) is a
    // deployment error; the partition still goes to one of them only, the lowest member id.
    async assign({ members }) {
      const taken = new Set<number>();
      return [...members]
        .sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0))
        .map(({ memberId, memberMetadata }) => {
          const want = wantedPartition(memberMetadata);
          const assignment: Record<string, number[]> = {};
          if (want !== undefined && !taken.has(want)) {
            taken.add(want);
            assignment[topic] = [want];
          }
          return {
            memberId,
            memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 1, assignment, userData: Buffer.alloc(0) }),
          };
        });
    },
  });
}

function wantedPartition(metadata: Buffer): number | undefined {
  try {
    const decoded = AssignerProtocol.MemberMetadata.decode(metadata);
    const wanted = JSON.parse(decoded?.userData.toString() ?? '') as Partial<Wanted>;
    return Number.isInteger(wanted.partition) ? wanted.partition : undefined;
  } catch {
    return undefined;
  }
}
