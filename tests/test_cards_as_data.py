"""A card is one entry in calc/specs/cards.py. Added there, as an author would add it, it appears in
every table that lists the cards, in the roofline, and in every calculator's choice of card. A model is
likewise one entry in calc/specs/models.py's CATALOGUE.

The tests add AMD's MI325X (and Mistral 7B) to a copy of calc and build against that copy in a fresh
Python (the lists are read when calc is imported, so patching a running one would test less than an
author does). The figures they expect are the data sheet's and the config's, worked out here by hand.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import build
from runbook.errors import ContentError

ROOT = Path(__file__).resolve().parent.parent
KNOWN = ["H100 SXM 80 GB", "H100 PCIe 80 GB", "H200 SXM 141 GB", "B200 180 GB", "A100 SXM 80 GB", "A100 SXM 40 GB",
         "L40S 48 GB", "L4 24 GB", "MI300X 192 GB"]
NAME = "MI325X 256 GB"
ENTRY = '''

MI325X = Card(
    name="MI325X 256 GB",
    marketed_gb=256,
    reported_mib=262144,
    hbm_tb_per_s=6.0,
    bf16_dense_tflops=1307.4,
    fp8_dense_tflops=2614.9,
    power_w=1000,
    interconnect="Infinity Fabric",
    interconnect_gb_per_s=896,
    source=("AMD Instinct MI325X data sheet, dense figures (2,614.9 bf16 and 5,229.8 fp8 TFLOP/s there are sparse); "
            "262,144 MiB is the 256 GiB of HBM3E, not a total rocm-smi was seen to report"),
    bf16_sparse_tflops=2614.9,
    host_link="PCIe Gen5 x16",
    host_gb_per_s=64,
    host_source="AMD Instinct MI325X data sheet: PCIe Gen5 x16, 128 GB/s both directions added: 64 GB/s each way",
    compute_capability=(9, 4),
    device_name="AMD_Instinct_MI325X",
    fp8_encoding="FNUZ",
    traits_source="vLLM names the card AMD_Instinct_MI325X (vllm/platforms/rocm.py, _ROCM_DEVICE_ID_NAME_MAP); CDNA 3",
)
CARDS["mi325x"] = MI325X
'''
BUILD = '''
import json, sys
from pathlib import Path
copy, root, out = map(Path, sys.argv[1:4])
sys.path[:0] = [str(copy), str(root)]
import build, calc
from calc.calculators import CALCULATORS
from calc.engine.logs import LOG_CARDS
from calc.facts import facts
from runbook import charts
assert Path(calc.__file__).parent == copy / "calc", calc.__file__
for number in ("04", "09"):
    for name, data in build.build(root / "content", out / number, only=number).items():
        (out / name).write_bytes(data)
roofline = charts.build("roofline", facts())
print(json.dumps({
    "choices": {c.name: "mi325x" in f.choices for c in CALCULATORS.values() for f in c.fields if f.name == "card"},
    "log_cards": "mi325x" in LOG_CARDS,
    "roofs": {s["name"]: s["line"] for s in roofline["data"] if "line" in s},
    "chart_rows": [row[0] for row in roofline["table"]["rows"]],
}))
'''

# Llama 3.1 8B's config: a decode step reads every weight but the embedding table (one row of it per token).
WEIGHTS_READ = (8_030_261_248 - 128_256 * 4_096) * 2  # bytes, bf16


def run_with_entry(work: Path, module: str, entry: str, script: str) -> dict:
    """Copy calc into `work`, append `entry` to calc/specs/`module`, run `script` against the copy; its
    last line of output, as JSON."""
    shutil.copytree(ROOT / "calc", work / "calc", ignore=shutil.ignore_patterns("__pycache__"))
    with open(work / "calc" / "specs" / module, "a", encoding="utf-8") as specs:
        specs.write(entry)
    out = work / "site"
    out.mkdir()
    run = subprocess.run([sys.executable, "-c", script, str(work), str(ROOT), str(out)], capture_output=True, text=True,
                         cwd=ROOT, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("mi325x")
    report = run_with_entry(work, "cards.py", ENTRY, BUILD)
    return {"report": report, "pages": {name: (work / "site" / name).read_text(encoding="utf-8")
                                        for name in ("04-hardware.html", "09-precision.html")}}


def shown(html: str, ref: str) -> str:
    """What the page prints for a reference."""
    found = re.search(rf'<span class="ref" data-ref="{re.escape(ref)}"[^>]*>([^<]*)</span>', html)
    assert found, f"{ref} is not on the page"
    return found.group(1)


def card_tables(html: str) -> list[str]:
    """Every table on the page that names all the cards calc knew before."""
    return [t for t in re.findall(r"<table.*?</table>", html, re.S) if all(name in t for name in KNOWN)]


def test_every_table_that_lists_the_cards_lists_the_new_one(built):
    tables = {page: card_tables(html) for page, html in built["pages"].items()}
    assert len(tables["04-hardware.html"]) == 3  # the datasheets, the phases, and the roofline's own table
    assert len(tables["09-precision.html"]) == 1
    for page, found in tables.items():
        for table in found:
            assert NAME in table, page


def test_the_datasheet_row_carries_the_data_sheets_figures(built):
    html = built["pages"]["04-hardware.html"]
    card = "hardware.cards.mi325x"
    assert shown(html, f"{card}.capacity") == "256.00 GiB"  # 262,144 MiB ÷ 1,024
    assert shown(html, f"{card}.bandwidth") == "6.00 TB/s"
    assert shown(html, f"{card}.dense") == "1,307.4 TFLOP/s"
    assert shown(html, f"{card}.sparse") == "2,614.9 TFLOP/s"
    assert shown(html, f"{card}.card.fp8_dense") == "2,614.9 TFLOP/s"
    assert shown(html, f"{card}.card.link_bandwidth") == "896 GB/s"
    assert f'data-ref="{card}.card.power_w">1,000</span> W' in html


def test_the_phase_row_follows_from_the_data_sheet(built):
    html = built["pages"]["04-hardware.html"]
    card = "hardware.cards.mi325x"
    assert shown(html, f"{card}.ridge") == f"{1307.4 / 6.0:.0f} FLOP/B"              # 218
    assert shown(html, f"{card}.floor") == f"{WEIGHTS_READ / 6.0e12 * 1e3:.1f} ms"    # 2.5
    assert shown(html, f"{card}.ceiling") == f"{6.0e12 / WEIGHTS_READ:.0f} tok/s"    # 400
    assert shown(html, f"{card}.name") == NAME


def test_the_tensor_core_row_reads_the_cards_traits(built):
    html = built["pages"]["09-precision.html"]
    assert shown(html, "precision.cards.mi325x.fp8") == "yes, in the FNUZ encodings (E4M3 up to 240)"
    assert shown(html, "precision.cards.mi325x.fp4") == "no"
    assert shown(html, "precision.cards.mi325x.fp8_dense") == "2,614.9 TFLOP/s"


def test_the_roofline_draws_a_tenth_roof_in_a_style_of_its_own(built):
    report = built["report"]
    roofs = report["roofs"]
    assert NAME in roofs and NAME in report["chart_rows"]
    styles = [(line["color"], line["dash"]) for name, line in roofs.items() if not name.endswith("chosen")]
    assert len(styles) == len(KNOWN) + 1 == len(set(styles))


def test_every_calculator_offers_the_new_card(built):
    choices = built["report"]["choices"]
    assert choices and all(choices.values()), choices
    assert built["report"]["log_cards"]
    for html in built["pages"].values():
        assert '<option value="mi325x">MI325X 256 GB</option>' in html


MODEL_ENTRY = '''
CATALOGUE["mistral-7b"] = MISTRAL_7B
'''
MODEL_LISTS = '''
import json, sys
from pathlib import Path
copy = Path(sys.argv[1])
sys.path[:0] = [str(copy), sys.argv[2]]
import calc
from calc.calculators import CALCULATORS
from calc.facts import facts
assert Path(calc.__file__).parent == copy / "calc", calc.__file__
print(json.dumps({
    "choices": {c.name: "mistral-7b" in f.choices for c in CALCULATORS.values() for f in c.fields if f.name == "model"},
    "family": {key: cache.per_token.value for key, cache in facts()["family"].items()},
}))
'''


def test_a_model_added_to_the_catalogue_is_offered_and_sized(tmp_path):
    report = run_with_entry(tmp_path, "models.py", MODEL_ENTRY, MODEL_LISTS)
    offered = {name for name, has in report["choices"].items() if has}
    assert {"capacity", "phases", "hardware"} <= offered, report["choices"]
    # Mistral 7B's config: 2 (key and value) × 32 layers × 8 KV heads × 128 dimensions × 2 bytes (bf16)
    assert report["family"]["7b"] == 2 * 32 * 8 * 128 * 2


@pytest.mark.parametrize("written, said", [
    ("@table precision.cards", "@table: 'precision.cards' is not a table"),
    ("@table precision.tensor_core_tables", "@table: unknown calc reference 'precision.tensor_core_tables'"),
    ("@table precision.tensor_core_table | the cards", "@table: a table takes no caption"),
])
def test_a_table_that_is_not_one_stops_the_build_at_its_line(content_copy, tmp_path, written, said):
    doc = content_copy / "09-precision.md"
    source = doc.read_text(encoding="utf-8")
    doc.write_text(source.replace("@table precision.tensor_core_table", written, 1), encoding="utf-8")
    with pytest.raises(ContentError) as err:
        build.build(content_copy, tmp_path / "site", only="09")
    line = next(i for i, text in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1) if text == written)
    assert err.value.line == line and err.value.message.startswith(said), err.value


def test_a_model_whose_size_another_shares_goes_by_its_whole_key():
    """Two 8B models in the catalogue: neither takes `family.8b` from the other, silently."""
    from calc.specs.models import CATALOGUE, short_key
    catalogue = {**CATALOGUE, "qwen-3-8b": CATALOGUE["llama-3.1-8b"]}
    assert short_key("llama-3.1-70b", catalogue) == "70b"
    assert [short_key(k, catalogue) for k in ("llama-3.1-8b", "qwen-3-8b")] == ["llama_3_1_8b", "qwen_3_8b"]
