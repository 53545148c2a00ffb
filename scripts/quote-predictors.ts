// What predicts that an earlier tool output is quoted later (issue 13, "outputs the agent still uses")?
// For every completed tool output and every later turn boundary, asks: is this output quoted at or
// after that boundary (the part is "live")? and tabulates candidate generic facts against the answer.
// Usage: npx tsx scripts/quote-predictors.ts <folder> [<folder>...]
import { loadSessions } from "../src/sim/load.js";
import { QuoteTracker } from "../src/sim/quotes.js";
import type { Message, Part } from "../src/graph/types.js";

const SUBJECT_FIELDS = ["filePath", "path", "url", "command", "pattern", "query"];
function subjectOf(p: Part): string | undefined {
  const input = (p.state?.input ?? {}) as Record<string, unknown>;
  if (typeof input.filePath === "string") return "file:" + input.filePath;
  if (typeof input.url === "string") return "url:" + input.url;
  if (typeof input.command === "string") return "cmd:" + input.command.trim().replace(/\s+/g, " ");
  return undefined;
}
type Row = { tool: string; chars: number; live: boolean; quotedAlready: boolean; touchedLastTurn: boolean; touchedWithin2: boolean; editedEver: boolean; namedInText: boolean; ageTurns: number; laterQuotes: number; idleTouch: number; idleAll: number };
const rows: Row[] = [];
for (const folder of process.argv.slice(2)) {
  for (const s of loadSessions(folder)) {
    const msgs: Message[] = s.messages;
    // pass 1: quote events with the newest source part before them, and the turn of each message
    const tracker = new QuoteTracker();
    const quotesOf = new Map<string, number[]>(); // part id -> message indexes quoting it
    const quotedLinesBefore = new Map<string, number>(); // part id -> first quoting message index
    let turn = 0;
    const turnOf: number[] = [];
    const partMsg = new Map<string, number>();
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i];
      if (m.info.role === "user") turn++;
      turnOf.push(turn);
      for (const ev of tracker.step(m)) {
        const src = ev.sourcePartIds[ev.sourcePartIds.length - 1];
        (quotesOf.get(src) ?? quotesOf.set(src, []).get(src)!).push(i);
      }
      for (const p of m.parts) partMsg.set(p.id, i);
    }
    // touches: subject -> message indexes of tool calls with it; edits: subject -> indexes of edit/write
    const touches = new Map<string, number[]>();
    const edits = new Map<string, number[]>();
    const texts: { i: number; text: string }[] = [];
    for (let i = 0; i < msgs.length; i++) for (const p of msgs[i].parts) {
      if (p.type === "tool") {
        const subj = subjectOf(p);
        if (subj) (touches.get(subj) ?? touches.set(subj, []).get(subj)!).push(i);
        if (subj && ["edit", "write", "multiedit", "apply_patch"].includes(p.tool ?? "")) (edits.get(subj) ?? edits.set(subj, []).get(subj)!).push(i);
      }
      if (p.type === "text" && typeof p.text === "string") texts.push({ i, text: p.text });
    }
    // user boundaries
    const userIdx = msgs.map((m, i) => (m.info.role === "user" ? i : -1)).filter((i) => i >= 0);
    for (const [id, i] of partMsg) {
      const p = msgs[i].parts.find((q) => q.id === id)!;
      if (p.type !== "tool" || p.state?.status !== "completed" || typeof p.state.output !== "string") continue;
      const subj = subjectOf(p);
      const q = quotesOf.get(id) ?? [];
      for (const b of userIdx) {
        if (b <= i) continue;
        const laterQuotes = q.filter((x) => x > b).length;
        const prevUser = userIdx.filter((u) => u < b).pop() ?? -1;
        const prevPrevUser = userIdx.filter((u) => u < prevUser).pop() ?? -1;
        const t = subj ? touches.get(subj)!.filter((x) => x < b && x > i) : [];
        const base = (subj && subj.startsWith("file:")) ? subj.slice(5).split("/").pop()! : undefined;
        rows.push({
          tool: p.tool ?? "", chars: p.state.output.length, live: laterQuotes > 0, laterQuotes,
          quotedAlready: q.some((x) => x < b),
          touchedLastTurn: subj ? touches.get(subj)!.some((x) => x < b && x > prevUser) : false,
          touchedWithin2: subj ? touches.get(subj)!.some((x) => x < b && x > prevPrevUser) : false,
          editedEver: subj ? (edits.get(subj) ?? []).some((x) => x < b) : false,
          namedInText: base ? texts.some((x) => x.i > i && x.i <= b && x.text.includes(base)) : false,
          ageTurns: turnOf[b] - turnOf[i],
          idleTouch: turnOf[b] - turnOf[Math.max(i, ...t)],
          idleAll: turnOf[b] - turnOf[Math.max(i, ...t, ...q.filter((x) => x < b), ...(base ? texts.filter((x) => x.i > i && x.i < b && x.text.includes(base)).map((x) => x.i) : []))],
        });
      }
    }
  }
}
function table(name: string, pred: (r: Row) => boolean, filter: (r: Row) => boolean = () => true) {
  const rs = rows.filter(filter);
  const tp = rs.filter((r) => pred(r) && r.live), fp = rs.filter((r) => pred(r) && !r.live);
  const fn = rs.filter((r) => !pred(r) && r.live);
  const tokens = (xs: Row[]) => Math.round(xs.reduce((s, r) => s + r.chars / 4, 0) / 1000);
  const qs = (xs: Row[]) => xs.reduce((s, r) => s + r.laterQuotes, 0);
  console.log(`${name.padEnd(40)} keep: ${String(tp.length + fp.length).padStart(6)} (${tokens([...tp, ...fp])}K tok) live kept ${tp.length} (${qs(tp)} quotes) | live lost ${fn.length} (${qs(fn)} quotes, ${tokens(fn)}K tok) | dead dropped ${rs.length - tp.length - fp.length - fn.length} (${tokens(rs.filter((r) => !pred(r) && !r.live))}K)`);
}
const reads = (r: Row) => r.tool === "read";
const notReads = (r: Row) => r.tool !== "read";
for (const [label, f] of [["reads", reads], ["others", notReads]] as const) {
  console.log(`-- ${label}: part x later-boundary rows ${rows.filter(f).length}, live ${rows.filter((r) => f(r) && r.live).length}`);
  table("keep nothing", () => false, f);
  table("age 1 only", (r) => r.ageTurns <= 1, f);
  table("quoted already", (r) => r.quotedAlready, f);
  table("touched in last turn", (r) => r.touchedLastTurn, f);
  table("touched within 2 turns", (r) => r.touchedWithin2, f);
  table("edited ever", (r) => r.editedEver, f);
  table("named in text since", (r) => r.namedInText, f);
  table("touched2 | named", (r) => r.touchedWithin2 || r.namedInText, f);
  table("touched1 | named | quoted", (r) => r.touchedLastTurn || r.namedInText || r.quotedAlready, f);
  table("touched2 | named | quoted", (r) => r.touchedWithin2 || r.namedInText || r.quotedAlready, f);
  table("age1 | touched2 | named | quoted", (r) => r.ageTurns <= 1 || r.touchedWithin2 || r.namedInText || r.quotedAlready, f);
  for (const k of [1, 2, 3, 4, 6, 8]) table(`idle touch < ${k}`, (r) => r.idleTouch < k, f);
  for (const k of [1, 2, 3, 4, 6, 8]) table(`idle all < ${k}`, (r) => r.idleAll < k, f);
  table("age<=2 | touched2 | named | quoted", (r) => r.ageTurns <= 2 || r.touchedWithin2 || r.namedInText || r.quotedAlready, f);
}
