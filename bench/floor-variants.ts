/** The floor relay's ways of relaying (`x-floor-variant`, bench/floor-relay-worker.js), in the order they are measured. */
export const FLOOR_VARIANTS = [
  "str-each",
  "str-batch",
  "bytes",
  "bytes-byob",
  "bytes-nowait",
  "native-its",
  "native-nowait",
  "transform",
  "pull",
  "pull-default",
  "pull-bytes",
];
