// Turn one LoCoMo conversation into two transcripts for the inspector's browser test: every
// session but the last as one long conversation, and the last as the next one.
// Usage: node locomo-to-jsonl.mjs LOCOMO.json INDEX OUT_DIR   (prints the two file names)
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [file, index, outDir] = process.argv.slice(2);
const conversation = JSON.parse(readFileSync(file, "utf8"))[Number(index)].conversation;
const months = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];

// "1:56 pm on 8 May, 2023" → epoch ms (UTC).
function parseDate(text) {
  const m = /(\d+):(\d+)\s*(am|pm) on (\d+) (\w+),? (\d{4})/i.exec(text || "");
  if (!m) throw new Error(`unreadable LoCoMo date ${JSON.stringify(text)}`);
  let hour = Number(m[1]) % 12;
  if (m[3].toLowerCase() === "pm") hour += 12;
  return Date.UTC(Number(m[6]), months.indexOf(m[5].toLowerCase()), Number(m[4]), hour, Number(m[2]));
}

const sessions = Object.keys(conversation)
  .filter((k) => /^session_\d+$/.test(k))
  .sort((a, b) => Number(a.split("_")[1]) - Number(b.split("_")[1]));
const lines = (keys) =>
  keys.flatMap((key) => {
    const start = parseDate(conversation[`${key}_date_time`]);
    return conversation[key].map((turn, i) =>
      JSON.stringify({
        role: turn.speaker === conversation.speaker_a ? "user" : "assistant",
        content: `${turn.speaker}: ${turn.text}`,
        timestamp: start + i * 30_000,
      }),
    );
  });
const long = join(outDir, "long.jsonl"), next = join(outDir, "next.jsonl");
writeFileSync(long, lines(sessions.slice(0, -1)).join("\n") + "\n");
writeFileSync(next, lines(sessions.slice(-1)).join("\n") + "\n");
console.log(`${long}\n${next}`);
