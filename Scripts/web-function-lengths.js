// The longest functions of the web client, measured by TypeScript's own parser (the checker
// check-web.sh runs): every function, method, constructor and arrow function, with its lines
// (a nested function counts in its parent's too). With --max N, exits 1 when one is longer.
//
//     node Scripts/web-function-lengths.js [--max 80] Client/web/*.js
//
// `typescript` is Debian's node-typescript; check-web.sh sets NODE_PATH to find it.
"use strict";
const fs = require("fs");
const path = require("path");
const ts = require("typescript");

const args = process.argv.slice(2);
let max = null;
if (args[0] === "--max") {
  max = Number(args[1]);
  args.splice(0, 2);
}
const found = [];
for (const file of args) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      const name = node.name ? node.name.getText(source) : ts.SyntaxKind[node.kind];
      found.push({ lines: last - first + 1, where: `${path.basename(file)}:${first + 1}`, name });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
found.sort((a, b) => b.lines - a.lines);
for (const f of found.slice(0, 5)) console.log(`${String(f.lines).padStart(4)} lines  ${f.where}  ${f.name}`);
const over = max === null ? [] : found.filter((f) => f.lines > max);
if (over.length > 0) {
  console.error(`web-function-lengths: ${over.length} function(s) over ${max} lines: split them`);
  process.exit(1);
}
