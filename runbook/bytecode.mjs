// Compiles a zip of Python sources to a zip of sourceless .pyc files with the pinned Pyodide
// itself (under Node), so the bytecode matches the Python the page runs exactly.
//
//     node runbook/bytecode.mjs PYODIDE_FOLDER SOURCE.zip OUT.zip
//
// Why: compiling the standard library from source was most of Python's start in the page
// (about 1.5 s of a 2 s start); loading bytecode takes a fraction of that. Line tables are
// flattened (every instruction reports its code object's first line) because the full tables
// would add about 450 KB compressed to every page; a traceback through the standard library
// then names the function but not the exact line.
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [folder, source, out] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(path.join(folder, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: folder + path.sep, stdout: () => {}, stderr: () => {} });
pyodide.FS.writeFile("/source.zip", readFileSync(source));
pyodide.runPython(`
import importlib.util, marshal, types, zipfile

NO_COLUMNS = 13  # PEP 626 / 657 location entry: line delta only, no column information


def flattened(code):
    units = len(code.co_code) // 2
    whole, rest = divmod(units, 8)
    table = bytes([0x80 | NO_COLUMNS << 3 | 7, 0]) * whole
    if rest:
        table += bytes([0x80 | NO_COLUMNS << 3 | rest - 1, 0])
    consts = tuple(flattened(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_linetable=table, co_consts=consts)


with zipfile.ZipFile("/source.zip") as source, zipfile.ZipFile("/out.zip", "w", zipfile.ZIP_STORED) as out:
    for info in source.infolist():
        data = source.read(info)
        if info.filename.endswith(".py"):
            code = flattened(compile(data, info.filename, "exec", dont_inherit=True))
            info = zipfile.ZipInfo(info.filename + "c", date_time=info.date_time)
            data = importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(code)
        out.writestr(info, data)
`);
writeFileSync(out, pyodide.FS.readFile("/out.zip"));
