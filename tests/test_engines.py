"""Document 12: a vLLM launch line read onto the ladder, LoRA slots, and static against continuous
batching, each checked against values derived here by hand from the config's numbers and the card's
memory; the launch calculator in CPython and in Chromium over file://, with its bad-input battery."""
from __future__ import annotations

import math
import shlex
from dataclasses import replace

import pytest

from arithmetic import check
from calc.engine import batching, kvcache, launch
from calc.model import lora
from calc.calculators import LAUNCH
from calc.specs.cards import CARDS
from calc.facts import facts
from calc.fields import COMMAND
from calc.specs.models import LLAMA_3_1_8B_CONFIG, LLAMA_3_1_70B_CONFIG
from calc.core.present import leaves
from calc.specs.stack import REFERENCE
from calc.core.units import GiB, MiB, Result
from conftest import Calculator, booted_page

import by_hand as hand

H100 = replace(REFERENCE, card=CARDS["h100-sxm"])
BLOCK, TYPICAL = 16, 2304                    # the stack's block, and its typical conversation in whole blocks


def parameters(config: dict) -> int:
    """A Llama-shaped model's parameters from its config: embedding, blocks, final norm and head."""
    hidden, layers = config["hidden_size"], config["num_hidden_layers"]
    head = hidden // config["num_attention_heads"]
    kv = config["num_key_value_heads"] * head
    block = hidden * hidden * 2 + hidden * kv * 2 + 3 * hidden * config["intermediate_size"] + 2 * hidden
    return config["vocab_size"] * hidden * 2 + layers * block + hidden


def by_hand(config: dict, pool: float, tp: int, kv_bytes: int, limit: int, lora_bytes: float = 0,
            tokens: int = 8192, seqs: int = 1024) -> dict:
    """The per-GPU ladder of a launch line, from the config alone; `tokens` and `seqs` the card's
    defaults under vllm serve (8,192 and 1,024 on an H100)."""
    weights = hand.weights_loaded(config, tp)
    budget = pool - weights - hand.profile_reserve(config, tp, min(tokens, seqs * limit), seqs) - lora_bytes
    heads = max(config["num_key_value_heads"] // tp, 1)
    per_token = 2 * config["num_hidden_layers"] * heads * (config["hidden_size"] // config["num_attention_heads"]) * kv_bytes
    capacity = int(budget // (BLOCK * per_token)) * BLOCK
    return {"weights": weights, "budget": budget, "per_token": per_token, "capacity": capacity,
            "worst": capacity // (math.ceil(limit / BLOCK) * BLOCK), "paged": capacity // TYPICAL}


def test_the_reference_line_is_the_reference_ladder():
    stack = launch.read(REFERENCE.serving.command, REFERENCE)
    assert stack == REFERENCE, "the default command is the reference stack, read"
    one, ladder = launch.shard(stack), kvcache.ladder(REFERENCE)
    assert one.kv_budget == ladder.kv_budget and one.token_capacity == ladder.token_capacity
    assert (one.users_worst.value, one.users_paged.value) == (ladder.users_worst.value, ladder.users_paged.value)


@pytest.mark.parametrize("line, config, tp, kv_bytes, limit", [
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9 --max-model-len 8192",
     LLAMA_3_1_8B_CONFIG, 1, 2, 8192),
    ("vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size=4 --max-model-len 16k "
     "--gpu-memory-utilization 0.9 --kv-cache-dtype fp8", LLAMA_3_1_70B_CONFIG, 4, 1, 16_000),
    ("python3 -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.1-70B-Instruct \\\n"
     "  -tp 8 --max-model-len 8K --gpu-memory-utilization=0.9", LLAMA_3_1_70B_CONFIG, 8, 2, 8192),
    ("vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 16 --max-model-len 4096 --gpu-memory-utilization 0.9",
     LLAMA_3_1_70B_CONFIG, 16, 2, 4096),
])
def test_a_launch_lines_ladder_by_hand(line, config, tp, kv_bytes, limit):
    stack = launch.read(line, H100)
    one = launch.shard(stack)
    pool = kvcache.ladder(stack).pool.value      # rung 2 is document 06's ladder, tested there
    expected = by_hand(config, pool, tp, kv_bytes, limit)
    assert one.weights.value == pytest.approx(expected["weights"])
    assert one.kv_budget.value == pytest.approx(expected["budget"])
    assert one.per_token.value == expected["per_token"]
    assert one.token_capacity.value == expected["capacity"]
    assert (one.users_worst.value, one.users_paged.value) == (expected["worst"], expected["paged"])
    assert stack.context_limit == limit


def test_a_cache_set_in_bytes_replaces_the_utilisation():
    line = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --kv-cache-memory-bytes 20G"
    stack = launch.read(line + " --gpu-memory-utilization 0.3", H100)
    one = launch.shard(stack)
    c = LLAMA_3_1_8B_CONFIG
    per_token = 2 * c["num_hidden_layers"] * c["num_key_value_heads"] * (c["hidden_size"] // c["num_attention_heads"]) * 2
    assert one.kv_budget.value == 20 * GiB
    assert one.token_capacity.value == int(20 * GiB // (BLOCK * per_token)) * BLOCK
    # the pool shown is what the engine holds, so pool − weights − reserve = budget adds up on the page
    assert one.pool.value == pytest.approx(hand.weights_loaded(c) + hand.profile_reserve(c) + 20 * GiB)
    assert "--gpu-memory-utilization: ignored" in stack.serving.notes
    assert launch.shard(launch.read(line, H100)).users_paged == one.users_paged   # the utilisation moves nothing


def test_a_cache_in_bytes_must_fit_what_cuda_offers():
    # the fit is checked against the total the engine multiplies (CUDA's), not nvidia-smi's larger one
    card = H100.card
    c = LLAMA_3_1_8B_CONFIG
    room = card.engine_capacity.value - hand.weights_loaded(c) - hand.profile_reserve(c)
    assert room < card.reported_capacity.value - hand.weights_loaded(c) - hand.profile_reserve(c)
    line = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --kv-cache-memory-bytes "
    launch.read(line + str(int(room) - 1), H100)
    with pytest.raises(launch.LaunchError, match="offers the engine"):
        launch.read(line + str(int(room) + 2 ** 20), H100)


def test_max_num_seqs_binds_only_below_memory():
    capped = launch.shard(launch.read(launch.CAP_EXAMPLE, H100))
    assert capped.users_paged.value > 256 and capped.admitted_paged.value == 256
    assert "--max-num-seqs" in capped.binds
    free = launch.shard(launch.read(REFERENCE.serving.command, H100))
    assert free.admitted_paged.value == free.users_paged.value < 1024


@pytest.mark.parametrize("card, seqs, chunk", [("h100-sxm", 1024, 8192), ("h200-sxm", 1024, 8192),
                                               ("b200", 1024, 16384), ("mi300x", 1024, 16384),
                                               ("a100-80", 256, 2048), ("l40s", 256, 2048), ("l4", 256, 2048)])
def test_vllms_defaults_follow_the_card(card, seqs, chunk):
    # vLLM 0.33.0, arg_utils.py get_batch_defaults: NVML's total of 160 GiB or more gets 16,384 for vllm serve;
    # 70 GiB or more and not an A100 gets 8,192 (16,384 is the LLM class's); anything else 2,048 and 256 sequences
    assert CARDS[card].reported_capacity.value >= 70 * GiB if seqs == 1024 else True
    assert (launch.default_max_num_seqs(CARDS[card]), launch.default_max_num_batched_tokens(CARDS[card])) == (seqs, chunk)


def test_flags_are_read_the_way_vllm_reads_them():
    base = "vllm serve meta-llama/Llama-3.1-8B-Instruct"
    assert launch.read(f"{base} --max-model-len 8k", REFERENCE).context_limit == 8000
    assert launch.read(f"{base} --max-model-len 8K", REFERENCE).context_limit == 8192
    assert launch.read(f"{base} --max-model-len auto", H100).context_limit == REFERENCE.model.max_position_embeddings
    assert launch.read(f"{base} --max_model_len 2048", REFERENCE).context_limit == 2048     # argparse's _ → -
    assert launch.read(f"{base} --max-model-len=2048", REFERENCE).context_limit == 2048
    assert launch.read(f"{base} --gpu-memory-utilization 0.8 --gpu-memory-utilization 0.7",
                       REFERENCE).gpu_memory_utilization == 0.7
    assert launch.read(base, REFERENCE).gpu_memory_utilization == 0.92            # CacheConfig's default
    assert launch.read(f"{base} --quantization fp8", REFERENCE).weight_precision.name == "fp8"
    assert launch.read(f"{base} --kv-cache-dtype fp8_e5m2", REFERENCE).kv_precision.name == "fp8"
    assert launch.read("vllm serve 'meta-llama/Llama-3.1-8B-Instruct' \\\n --block-size 32", REFERENCE).block_size == 32
    assert launch.read("vllm serve neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", REFERENCE).weight_precision.name == "fp8"
    noted = launch.read(f"{base} --port 8000 --enforce-eager --max-loras 4 --max-model-len 8192", REFERENCE).serving.notes
    assert "--port" in noted and "--enforce-eager" not in noted and "without --enable-lora" in noted
    eager = launch.read(f"{base} --enforce-eager --max-model-len 8192", REFERENCE)
    assert eager.serving.enforce_eager and launch.shard(eager).accounting.graphs.value == 0
    replicated = launch.read(f"{base} -dp 2 --max-model-len 8192", REFERENCE)
    assert "users multiply by it" in replicated.serving.notes and replicated.context_limit == 8192
    several = launch.read(f"{base} --lora-modules a=/x b=/y --served-model-name a b --max-model-len 8192", REFERENCE)
    assert "--lora-modules" in several.serving.notes and several.context_limit == 8192
    assert launch.read(f"CUDA_VISIBLE_DEVICES=0 VLLM_LOGGING_LEVEL=INFO {base} # the reference\n", REFERENCE).model \
        == REFERENCE.model


def test_auto_length_is_the_longest_one_sequence_the_cache_holds():
    # on an L4 the 8B's full 131,072 positions do not fit; auto takes the token capacity instead, by hand
    l4 = replace(REFERENCE, card=CARDS["l4"])
    c = LLAMA_3_1_8B_CONFIG
    pool = math.ceil(CARDS["l4"].engine_capacity.value * 0.92)
    expected = by_hand(c, pool, 1, 2, BLOCK, tokens=2048, seqs=256)["capacity"]  # the L4's defaults
    assert expected < c["max_position_embeddings"]
    for word in ("auto", "AUTO", "-1"):
        stack = launch.read(f"vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len {word}", l4)
        assert stack.context_limit == expected and "longest length" in stack.serving.notes
    with pytest.raises(launch.LaunchError, match="auto picks the longest"):
        launch.read(f"vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len {c['max_position_embeddings']}", l4)


@pytest.mark.parametrize("line", [
    "vllm serve 'meta-llama/Llama-3.1-8B-Instruct' --served-model-name \"my model\" --port=8000",
    "vllm serve a\\ b  --chat-template '{{ x }}'  \"it's\" ''",
    'python -m vllm.entrypoints.openai.api_server --model "meta-llama/Llama-3.1-8B-Instruct"\t-tp 2',
])
def test_words_are_split_as_shlex_splits_them(line):
    assert launch.tokens_of(line) == shlex.split(line)


def test_a_backslash_before_a_line_break_joins_the_lines_as_a_shell_does():
    assert launch.tokens_of("vllm serve m \\\n  --port 1") == ["vllm", "serve", "m", "--port", "1"]


@pytest.mark.parametrize("line, message", [
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --foo 3", "--foo is not a vLLM flag this calculator knows"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 90", "write 0.9"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 1.5", "at most 1"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 200000", "beyond Llama 3.1 8B Instruct's 131,072 positions"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 3", "does not divide"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 12", "does not divide"),
    ("vllm serve 'meta-llama/Llama-3.1-8B-Instruct", "a quotation mark is never closed"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct \\", "lone backslash"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct\n--max-model-len 8192", "without a backslash"),
    ("vllm serve acme/secret-model", "not a model calc has the config of"),
    ("vllm serve", "name the model"),
    ("ollama run llama3", "start the line with vllm serve"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len", "needs a value"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --enforce-eager=true", "is a switch"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 extra", "stands alone"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 512 --max-num-batched-tokens 256", "at least --max-num-seqs"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-batched-tokens 64 --max-num-seqs 128",
     "must be at least --max-num-seqs (128)"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --swap-space 4", "not a flag of vLLM 0.33.0"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization awq", "already quantised to awq"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct -q gptq_marlin", "Only fp8 quantises a 16-bit checkpoint"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --cpu-offload-gb abc", "takes a number such as 4, not “abc”"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --cpu-offload-gb 1,5", "takes a number such as 4"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0_9", "takes a number such as 0.9"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --block-size 7", "a multiple of 16 tokens"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --block-size 24", "a multiple of 16 tokens"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 9999999999999999", "beyond any count vLLM takes"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct \\  \n--port 1", "followed by spaces before the line break"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct \u2013max-model-len 8192", "a dash, not two hyphens"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora --max-loras 1024 --max-lora-rank 512 -tp 8",
     "Lower --max-loras or --max-lora-rank"),
    ("vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 2 --gpu-memory-utilization 0.5",
     "Raise --gpu-memory-utilization (now 0.5)"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-memory-bytes 8G", "Raise --kv-cache-memory-bytes"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-lora-rank 24 --enable-lora", "vLLM accepts 1, 8, 16"),
    ("vllm serve mistralai/Mixtral-8x7B-Instruct-v0.1 -tp 2 --enable-lora", "dense models"),
    ("vllm serve meta-llama/Llama-3.1-405B-Instruct", "leave no cache"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 200000 --gpu-memory-utilization 0.3",
     "beyond Llama 3.1 8B Instruct's"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.3", "less than one sequence"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len " + "9" * 40, "too long to be a count"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --pipeline-parallel-size 2", "one tensor-parallel group"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --dtype float32", "16 bits or fewer"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype nvfp4", "calc models"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 1.5K", "binary suffix"),
    ("vllm serve neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8 --quantization awq", "contradicts the checkpoint"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora --lora-target-modules q_proj v_proj",
     "cannot honour a narrower list"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-memory-bytes 100G", "H100 SXM 80 GB offers the engine"),
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2 --enable-lora --fully-sharded-loras", "cannot honour it"),
])
def test_what_cannot_be_read_is_refused_by_name(line, message):
    answer = LAUNCH.run({**LAUNCH.defaults, "command": line}, None, [], [], False)
    assert not answer["ok"] and message in answer["errors"]["command"], answer


@pytest.mark.parametrize("text, message", [
    ("", "is empty"), ("   ", "is empty"), ("vllm serve x\u200b", "does not print"), ("v" * 4001, "over 4,000 characters"),
])
def test_the_text_field_refuses_what_is_not_a_line(text, message):
    with pytest.raises(ValueError, match=message):
        COMMAND.parse(text)


# ---- LoRA, from the config's shapes

def test_an_adapters_bytes_by_hand():
    c = LLAMA_3_1_8B_CONFIG
    h, i, layers = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    kv = c["num_key_value_heads"] * h // c["num_attention_heads"]
    pairs = [(h, h), (h, kv), (h, kv), (h, h), (h, i), (h, i), (i, h)]       # q k v o gate up down
    per_layer = sum(16 * (a + b) for a, b in pairs)
    section = facts()["lora"]
    assert section["per_layer"].value == per_layer
    assert section["adapter"].value == layers * per_layer * 2 == 80 * MiB
    assert section["adapter_qv"].value == layers * 16 * ((h + h) + (h + kv)) * 2
    # the embedding (A vocab × rank, B hidden × rank) and the LM head (A rank × hidden, B vocab × rank)
    vocab = 16 * c["vocab_size"] + 16 * h + 16 * h + 16 * c["vocab_size"]
    assert section["slot"].value == (layers * per_layer + vocab) * 2
    assert section["reserved"].value == 8 * (layers * per_layer + vocab) * 2 == 80 * MiB * 8 + 67_764_224
    per_token = 2 * layers * c["num_key_value_heads"] * (h // c["num_attention_heads"]) * 2
    assert section["tokens"].value == 8 * (layers * per_layer + vocab) * 2 / per_token


def test_lora_slots_split_as_vllm_splits_them():
    # column-parallel (q, k, v, gate, up): A whole, B split; row-parallel (o, down): A split, B whole
    c = LLAMA_3_1_8B_CONFIG
    h, i = c["hidden_size"], c["intermediate_size"]
    kv = c["num_key_value_heads"] * h // c["num_attention_heads"]
    tp, r = 2, 64
    column = [(h, h), (h, kv), (h, kv), (h, i), (h, i)]
    row = [(h, h), (i, h)]
    expected = sum(r * (a + b // tp) for a, b in column) + sum(r * (a // tp + b) for a, b in row)
    model = REFERENCE.model
    assert lora.parameters_per_layer(model, r, "all", tp) == expected
    line = ("vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2 --max-model-len 8192 --gpu-memory-utilization 0.9 "
            "--enable-lora --max-loras 4 --max-lora-rank 64")
    one = launch.shard(launch.read(line, H100))
    vocab = 2 * r * (c["vocab_size"] + h)          # the embedding and LM head buffers are whole on every GPU
    assert one.lora.value == 4 * (c["num_hidden_layers"] * expected + vocab) * 2
    pool = kvcache.ladder(REFERENCE).pool.value
    assert one.kv_budget.value == pytest.approx(pool - hand.weights_loaded(c, 2) - hand.profile_reserve(c, 2) - one.lora.value)


# ---- Static against continuous batching, simulated step by step here

def simulate(requests, slots: int, continuous: bool) -> list[list[str]]:
    """One step at a time: who holds each slot, by the two rules."""
    waiting, seats, left, grid, step = list(requests), [""] * slots, {}, [], 0
    while waiting or any(seats):
        if continuous or not any(seats):
            for s in range(slots):
                arrived = [r for r in waiting if r.arrives <= step]
                if not seats[s] and arrived:
                    seats[s] = arrived[0].name
                    left[arrived[0].name] = arrived[0].tokens
                    waiting.remove(arrived[0])
        grid.append(list(seats))
        for s in range(slots):
            if seats[s]:
                left[seats[s]] -= 1
                if not left[seats[s]]:
                    seats[s] = ""
        step += 1
    return [[row[s] for row in grid] for s in range(slots)]


@pytest.mark.parametrize("schedule, continuous", [(batching.static, False), (batching.continuous, True)])
def test_the_schedules_match_a_step_by_step_simulation(schedule, continuous):
    made = schedule()
    assert [list(row) for row in made.grid] == simulate(batching.EXAMPLE, batching.SLOTS, continuous)
    tokens = sum(r.tokens for r in batching.EXAMPLE)
    assert made.utilisation.value == tokens / (batching.SLOTS * len(made.grid[0]))
    first = {name: min(step for row in made.grid for step, held in enumerate(row) if held == name)
             for name in (r.name for r in batching.EXAMPLE)}
    waits = [first[r.name] - r.arrives for r in batching.EXAMPLE]
    assert made.mean_wait.value == sum(waits) / len(waits)


def test_equal_lengths_still_gain_when_arrivals_are_spread():
    # eight 4-token requests arriving in pairs at steps 0 to 3: the static batch waits for its latest member
    pairs = tuple(batching.Request(chr(65 + i), i // 2, 4) for i in range(8))
    static, continuous = batching.static(pairs, 4), batching.continuous(pairs, 4)
    assert [list(row) for row in static.grid] == simulate(pairs, 4, False)
    assert [list(row) for row in continuous.grid] == simulate(pairs, 4, True)
    assert (static.steps.value, continuous.steps.value) == (12, 9)
    assert static.utilisation.value == 32 / 48 and continuous.utilisation.value == 32 / 36
    together = tuple(batching.Request(chr(65 + i), 0, 4) for i in range(8))
    assert batching.static(together, 4).grid == batching.continuous(together, 4).grid


def test_a_fuller_step_takes_longer_so_time_gains_less_than_steps():
    # the step time is document 05's model (tested there); the busy seats come from the simulation here
    from calc.engine.timing import decode_step
    section = facts()["batching"]
    totals = []
    for continuous in (False, True):
        grid = simulate(batching.EXAMPLE, batching.SLOTS, continuous)
        busy = [sum(1 for row in grid if row[step]) for step in range(len(grid[0]))]
        totals.append(sum(decode_step(REFERENCE, b, REFERENCE.typical_conversation).time.value for b in busy))
    assert section["static_time"].value == pytest.approx(totals[0])
    assert section["continuous_time"].value == pytest.approx(totals[1])
    assert 1 < section["time_gain"].value < section["speedup"].value


def test_replicas_double_the_users_and_a_split_holds_the_weights_once():
    replicas = facts()["engines"]["replicas"]
    pool = kvcache.ladder(REFERENCE).pool.value
    alone = by_hand(LLAMA_3_1_8B_CONFIG, pool, 1, 2, REFERENCE.context_limit)["paged"]
    split = by_hand(LLAMA_3_1_8B_CONFIG, pool, 2, 2, REFERENCE.context_limit)["paged"]
    assert replicas["replicas"].value == 2 * alone
    assert replicas["split"].value == split > 2 * alone


def test_continuous_batching_never_does_worse_on_the_example():
    section = facts()["batching"]
    assert section["continuous"].steps.value < section["static"].steps.value
    assert section["continuous"].mean_wait.value < section["static"].mean_wait.value


def test_every_worked_line_adds_up():
    namespace = facts()
    for path, value in leaves({k: namespace[k] for k in ("engines", "lora", "batching")}, depth=6):
        if isinstance(value, Result) and value.worked:
            assert check(value.worked) == [], path


def test_every_flag_names_its_source():
    assert all(flag.source for flag in launch.FLAGS) and all(k.source for k in launch.KNOBS.values())
    assert launch.BY_NAME["--gpu-memory-utilization"].default == "0.92"
    assert launch.BY_NAME["--block-size"].default.startswith("16,") and launch.BY_NAME["--max-lora-rank"].default == "16"
    assert launch.BY_NAME["--max-num-batched-tokens"].default.startswith("8192 under vllm serve")


def test_other_engines_fractions_by_hand():
    others = facts()["engines"]["others"]
    ladder = kvcache.ladder(REFERENCE)
    weights = hand.weights_loaded(LLAMA_3_1_8B_CONFIG)
    assert others["sglang_budget"].value == pytest.approx(ladder.pool.value - weights)
    c = LLAMA_3_1_8B_CONFIG
    per_token = 2 * c["num_hidden_layers"] * c["num_key_value_heads"] * (c["hidden_size"] // c["num_attention_heads"]) * 2
    trt = 0.9 * (ladder.capacity.value - weights - hand.profile_reserve(LLAMA_3_1_8B_CONFIG))
    assert others["trt_capacity"].value == int(trt // (BLOCK * per_token)) * BLOCK
    assert others["llama_per_slot"].value == others["llama_total"].value // 4 == REFERENCE.context_limit
    knobs = launch.KNOBS
    assert "2048" in knobs["trt_batch"].default and "8192" in knobs["trt_tokens"].default
    assert "unified" in knobs["llama_slots"].default


# ---- In Chromium, over file://, with the network blocked.

CALC = Calculator("launch")


@pytest.fixture(scope="module")
def launch_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "12", "launch")


@pytest.mark.parametrize("inputs", [
    {"card": "h100-sxm", "command": "vllm serve meta-llama/Llama-3.1-70B-Instruct \\\n  --tensor-parallel-size 4 "
                                    "--max-model-len 16k --kv-cache-dtype fp8 --max-num-seqs 64"},
    {"card": "a100-80", "command": "vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora --max-loras 8 "
                                   "--max-model-len=32768 --port 8000"},
    {"card": "l4", "command": "python -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.2-1B-Instruct "
                              "--gpu-memory-utilization 0.8 --max-model-len 8192"},
])
def test_the_calculator_follows_cpython(launch_page, inputs):
    page = launch_page.page
    assert CALC.set(page, **inputs) == "computed"
    shown = CALC.live(page)
    expected = LAUNCH.run({**LAUNCH.defaults, **inputs}, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}


@pytest.mark.parametrize("value", [
    "", "vllm serve meta-llama/Llama-3.1-8B-Instruct --foo 3",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 90",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 1000000",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 3", "vllm serve \"meta-llama/Llama-3.1-8B-Instruct",
    "vllm serve acme/secret-model", "vllm serve meta-llama/Llama-3.1-8B-Instruct\u202e",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization awq",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --cpu-offload-gb abc",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-batched-tokens 64 --max-num-seqs 128",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --block-size 7",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct \u2013max-model-len 8192",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 9999999999999999",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct " + "x" * 100_000,
])
def test_bad_input_gets_a_message(launch_page, value):
    page = launch_page.page
    CALC.set(page, **LAUNCH.defaults)
    expected = LAUNCH.run({**LAUNCH.defaults, "command": value}, None, [], [], False)["errors"]["command"]
    after = CALC.refuse(page, "command", value, expected)
    assert not any("Traceback" in text for text in after.values())
    CALC.set(page, **LAUNCH.defaults)


def test_a_card_too_small_for_the_line_is_refused_in_the_page(launch_page):
    page = launch_page.page
    CALC.set(page, **LAUNCH.defaults)
    assert CALC.set(page, command="vllm serve meta-llama/Llama-3.1-70B-Instruct --max-model-len 8192") == "invalid"
    assert "vLLM stops at start-up" in page.text_content(f"{CALC.selector} [data-error-for=command]")
    CALC.set(page, **LAUNCH.defaults)


def test_a_token_budget_below_the_default_cap_lowers_the_cap():
    """vllm/engine/arg_utils.py, _set_default_max_num_seqs_and_batched_tokens_args: with --max-num-seqs
    unset, max_num_seqs = min(1,024, max_num_batched_tokens), so a 512-token budget starts with 512
    sequences, and the sampler's warm-up takes 512 rows."""
    answer = LAUNCH.run({**LAUNCH.defaults, "command": "vllm serve meta-llama/Llama-3.1-8B-Instruct "
                                                       "--max-num-batched-tokens 512"},
                        None, ["engines.shard.accounting.max_num_seqs", "engines.shard.accounting.activation"], [], False)
    assert answer["ok"], answer
    assert answer["refs"]["engines.shard.accounting.max_num_seqs"][0] == "512"
    per_logit = 1.89 * 2 ** 30 / (1024 * 128_256)
    shown = float(answer["refs"]["engines.shard.accounting.activation"][0].split()[0])
    assert shown == pytest.approx(512 * 128_256 * per_logit / 2 ** 30, abs=0.006)  # shown to two places


# ---- Document 12's log reader in Chromium: a pasted start-up log beside the model.

READER = Calculator("startup")


def reader_rows(page) -> dict[str, str]:
    return {ref: text for ref, text in READER.live(page).items() if ref.startswith("logread.")}


def test_a_pasted_log_is_read_as_cpython_reads_it(launch_page):
    """A published 0.95 log on the H100, then the 0.17.1 consumer log on its own card: every row the page
    shows is CPython's, and the rows name each log's own figures."""
    from calc.calculators import STARTUP
    from calc.engine import logs
    page = launch_page.page
    for card, text in (("h100-sxm", logs.PUBLISHED_PLANNER_8B_TP2.text), ("rtx-3090", logs.PUBLISHED_RTX_3090.text)):
        assert READER.set(page, card=card, log=text) == "computed"
        shown = reader_rows(page)
        expected = STARTUP.run({"card": card, "log": text}, None, list(shown), [], False)
        assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}
    assert shown["logread.rows.tokens.log"] == "46,544 tokens" and shown["logread.rows.activation.log"] == "not printed"


def test_a_pasted_log_is_only_ever_text(launch_page):
    page = launch_page.page
    text = ("non-default args: {'model': '<img src=x onerror=alert(1)>'}\n"
            "Available KV cache memory: 5 GiB <script>window.pwned = 1</script>")
    assert READER.set(page, card="h100-sxm", log=text) == "computed"
    assert page.evaluate("() => window.pwned === undefined && document.querySelectorAll('img[src=x]').length === 0")
    assert "<img src=x onerror=alert(1)>" in page.text_content("[data-ref='logread.notes']")


def test_a_five_megabyte_paste_stays_responsive(launch_page):
    """A day of DEBUG output pasted whole: the reader answers within seconds and the page's thread is
    never blocked for long, since Python reads it in its worker."""
    from calc.engine import logs
    page = launch_page.page
    filler = "(EngineCore pid=1) DEBUG 04-22 00:03:47 [v1/worker/gpu_worker.py:284] nothing to read here\n"
    text = logs.PUBLISHED_PLANNER_8B.text + "\n" + filler * ((logs.LONGEST_LOG - 10_000) // len(filler))
    assert len(text) < logs.LONGEST_LOG
    page.evaluate("text => { window.pasted = text; }", text)  # handed over first: Playwright's own copy is not the page's
    dispatch_ms = page.evaluate(
        "() => { window.longest = 0; let last = performance.now(); window.ticker = setInterval(() => {"
        " const now = performance.now(); window.longest = Math.max(window.longest, now - last); last = now; }, 20);"
        " const node = document.querySelector('[data-calculator=startup] [name=log]'); node.focus();"
        " const data = new DataTransfer(); data.setData('text/plain', window.pasted); const start = performance.now();"
        " node.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));"
        " return performance.now() - start; }")
    assert dispatch_ms < 500, f"the paste itself took {dispatch_ms:.0f} ms"
    field = page.locator(f"{READER.selector} [name=log]")
    assert READER.settle(page) == "computed"
    longest = page.evaluate("() => { clearInterval(window.ticker); return window.longest; }")
    assert longest < 500, f"the page's thread was blocked for {longest:.0f} ms"
    assert page.text_content("[data-ref='logread.rows.available.log']") == "58.11 GiB"
    shown = field.input_value()
    assert len(shown) < 21_000 and f"{len(text):,} characters pasted, all of them read" in shown
    field.press("End")
    field.type("x")
    assert READER.settle(page) == "computed", "typing replaces the held paste with what the box shows"
    too_long = READER.set(page, log="x" * (logs.LONGEST_LOG + 1))
    assert too_long == "invalid"
    READER.set(page, card="h100-sxm", log=logs.PUBLISHED_PLANNER_8B.text)
