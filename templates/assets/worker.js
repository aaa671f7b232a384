"use strict";
// The calculator's worker: unpacks the files the page carried (runbookUnpack, from unpack.js, runs
// first in this worker), boots Pyodide from them, then runs calc.calculators.
// Nothing here reaches the network: fetch is replaced by a lookup in the unpacked files.

let calculate = null;
let python = null;

// Which standard-library files Python has loaded: how runbook/stdlib_modules.txt is derived.
const LOADED_STDLIB = `
import sys
root = "%s/lib/python%d%d.zip/" % ((sys.prefix.rstrip("/"),) + sys.version_info[:2])
sorted({m.__file__[len(root):].removesuffix("c") for m in list(sys.modules.values())
        if (getattr(m, "__file__", None) or "").startswith(root)})
`;

function moduleUrl(bytes) {
  return URL.createObjectURL(new Blob([bytes], { type: "text/javascript" }));
}

async function boot(message) {
  const files = {};
  for (const [name, text] of Object.entries(message.packed)) files[name] = runbookUnpack(text);
  const calc = JSON.parse(new TextDecoder().decode(runbookUnpack(message.calc)));

  self.fetch = async (url) => {
    const name = String(url).split("/").pop();
    if (!(name in files)) throw new Error("the calculator works offline and has no file " + name);
    const type = name.endsWith(".wasm") ? "application/wasm" : "application/octet-stream";
    return new Response(files[name], { headers: { "Content-Type": type } });
  };

  const { loadPyodide } = await import(moduleUrl(files["pyodide.mjs"]));
  const { default: createPyodideModule } = await import(moduleUrl(files["pyodide.asm.mjs"]));
  const pyodide = await loadPyodide({
    indexURL: "file:///runbook/pyodide/",
    lockFileContents: message.lock,
    createPyodideModule,
    stdout: () => {},
    stderr: () => {},
  });
  for (const [name, source] of Object.entries(calc)) {
    const path = "/home/pyodide/calc/" + name;
    pyodide.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    pyodide.FS.writeFile(path, source);
  }
  pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide')");
  calculate = pyodide.pyimport("calc.calculators").run_json;
  python = pyodide;
}

self.onmessage = async (event) => {
  const message = event.data;
  if (message.type === "boot") {
    const started = performance.now();
    try {
      await boot(message);
      self.postMessage({ type: "ready", ms: performance.now() - started });
    } catch (error) {
      self.postMessage({ type: "failed", message: String(error && error.message || error) });
    }
  } else if (message.type === "loaded-stdlib") {
    self.postMessage({ type: "loaded-stdlib", id: message.id, files: python.runPython(LOADED_STDLIB).toJs() });
  } else if (message.type === "run") {
    const started = performance.now();
    try {
      // A long computation reports its progress as it goes (calc.core.progress); the page shows each report.
      const listener = (done, total, what) => self.postMessage({ type: "progress", id: message.id, done, total, what });
      const answer = calculate(JSON.stringify(message.request), listener);
      self.postMessage({ type: "result", id: message.id, answer, ms: performance.now() - started });
    } catch (error) {
      // run_json answers every Python exception itself, so anything thrown here means the
      // runtime broke (a stack overflow, a fatal error): the page starts a fresh one.
      const answer = { ok: false, errors: { calculator: "Python stopped (" + String(error && error.message || error).slice(0, 200) +
        "); it restarts with your next change." } };
      self.postMessage({ type: "result", id: message.id, answer, fatal: true, ms: performance.now() - started });
    }
  }
};
