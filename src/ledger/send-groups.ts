/** A Queue's `sendBatch` takes at most 100 messages and 256 KB: groups stay under 200 KB, measured as UTF-8 at worst (3 bytes a character). */
const MAX_SEND_MESSAGES = 100;
const MAX_SEND_BYTES = 200 * 1024;

/** Message bodies in order, grouped into as few `sendBatch` calls as the queue's limits allow (a body too large alone is a group alone). */
export function sendGroups<T>(bodies: readonly T[]): T[][] {
  const groups: T[][] = [];
  let group: T[] = [];
  let bytes = 0;
  for (const body of bodies) {
    const size = JSON.stringify(body).length * 3;
    if (group.length > 0 && (group.length >= MAX_SEND_MESSAGES || bytes + size > MAX_SEND_BYTES)) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(body);
    bytes += size;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}
