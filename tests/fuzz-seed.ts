// Vitest setup file: the seed of every fast-check property in the suite. Under CI (`CI` set) it is
// fixed, so CI runs the cases `CI=true npm test` ran before the push and a red CI always
// reproduces; elsewhere fast-check draws a random one, so local runs keep exploring.
// ACP_FUZZ_SEED replays a reported failure in either case.
import fc from "fast-check";

export const CI_FUZZ_SEED = 20261126;

const seed = process.env.ACP_FUZZ_SEED ? Number(process.env.ACP_FUZZ_SEED) : process.env.CI ? CI_FUZZ_SEED : undefined;
if (seed !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
