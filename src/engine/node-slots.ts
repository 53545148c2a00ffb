// The engine's field on the graph's nodes: the decisions committed for a part. Declared here, by
// module augmentation, so that src/graph does not import the engine (the layer order).
import type { DecisionSlots } from "./state.js";

declare module "../graph/graph.js" {
  interface PartNode {
    /** Decisions committed for this part (the session state's record), attached by the runtime. */
    slots?: DecisionSlots;
  }
}
