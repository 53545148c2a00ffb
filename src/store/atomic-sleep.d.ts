// atomic-sleep ships no types: it blocks the thread for `ms` milliseconds (Atomics.wait).
declare module "atomic-sleep" {
  export default function sleep(ms: number): void;
}
