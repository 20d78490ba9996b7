// A local npm registry on 127.0.0.1 serving the tarballs given on the command line (and nothing
// else), so the end-to-end test installs MemCC the way a user does — OpenClaw's managed npm
// resolving the plugin's platform package from a registry — without the internet.
// Speaks the parts of the registry protocol npm uses to install: GET /<name> (the packument,
// `@scope%2fname` or `@scope/name`) and GET /-/<file>.tgz. Prints `REGISTRY_LISTENING <port>`;
// every request is appended to $REGISTRY_LOG as JSON lines.
// Usage: node registry.mjs a.tgz b.tgz
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";

const packages = new Map();
for (const file of process.argv.slice(2)) {
  const tar = spawnSync("tar", ["-xzOf", file, "package/package.json"], { encoding: "utf8" });
  if (tar.status !== 0) throw new Error(`cannot read package.json from ${file}: ${tar.stderr}`);
  const manifest = JSON.parse(tar.stdout);
  const bytes = fs.readFileSync(file);
  packages.set(manifest.name, {
    manifest,
    file: path.basename(file),
    bytes,
    shasum: crypto.createHash("sha1").update(bytes).digest("hex"),
    integrity: `sha512-${crypto.createHash("sha512").update(bytes).digest("base64")}`,
  });
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://127.0.0.1");
  if (process.env.REGISTRY_LOG) fs.appendFileSync(process.env.REGISTRY_LOG, JSON.stringify({ method: req.method, path: url.pathname }) + "\n");
  const send = (status, body, type = "application/json") => {
    res.writeHead(status, { "content-type": type, "cache-control": "max-age=0" });
    res.end(body);
  };
  if (req.method !== "GET" && req.method !== "HEAD") return send(405, JSON.stringify({ error: "method not allowed" }));
  if (url.pathname.startsWith("/-/")) {
    const pkg = [...packages.values()].find((p) => `/-/${p.file}` === url.pathname);
    return pkg ? send(200, pkg.bytes, "application/octet-stream") : send(404, JSON.stringify({ error: "not found" }));
  }
  const pkg = packages.get(decodeURIComponent(url.pathname.slice(1)));
  if (!pkg) return send(404, JSON.stringify({ error: "not found" }));
  const { manifest } = pkg;
  const origin = `http://127.0.0.1:${server.address().port}`;
  send(200, JSON.stringify({
    _id: manifest.name,
    name: manifest.name,
    "dist-tags": { latest: manifest.version },
    versions: {
      [manifest.version]: {
        ...manifest,
        _id: `${manifest.name}@${manifest.version}`,
        dist: { tarball: `${origin}/-/${pkg.file}`, shasum: pkg.shasum, integrity: pkg.integrity },
      },
    },
    time: { [manifest.version]: new Date(0).toISOString() },
  }));
});
server.listen(0, "127.0.0.1", () => console.log(`REGISTRY_LISTENING ${server.address().port}`));
