#!/bin/sh
# bert_hf_check.sh — directories that tide.models.bert's save_pretrained writes, read back by
# Hugging Face transformers (the pinned .venv of tools/pyenv.sh): for each model class, the
# fixture checkpoints of spec/fixtures/make_bert.py after a trip through tide, and fresh
# tide-initialised models (tide's own init and config.json). Each directory must load in
# transformers with no missing or unexpected keys and give tide's outputs within 1e-5.
# Without .venv (or transformers in it) the check is skipped. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
PY=.venv/bin/python
if [ ! -x "$PY" ] || ! "$PY" -c "import transformers, safetensors" >/dev/null 2>&1; then
    echo "bert_hf_check: skipped (no .venv with transformers: sh tools/pyenv.sh makes it)"
    echo "0 passed, 0 failed"
    exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tide-bert-check.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
export LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/lua/?.so;;"
export HF_HOME="$TMP/hf" XDG_CACHE_HOME="$TMP/cache" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

# tide: each model run on the fixture inputs, saved with save_pretrained, its inputs and
# outputs beside it in <name>.io.safetensors
if ! lua5.4 - "$TMP" >"$TMP/lua.log" 2>&1 <<'EOF'
local tide = require "tide"
local bert = tide.models.bert
local out_dir = arg[1]
local REF = dofile("spec/fixtures/bert_reference.lua")
local function fixture(r)
    return tide.tensor(r.data, { dtype = "int64" }):reshape(r.shape)
end
local function run(name, model, c)
    local ids = fixture(c.inputs.input_ids)
    local opts = { attention_mask = fixture(c.inputs.attention_mask),
        token_type_ids = fixture(c.inputs.token_type_ids) }
    model:eval()
    local out = model(ids, opts)
    local io = { input_ids = ids, attention_mask = opts.attention_mask,
        token_type_ids = opts.token_type_ids }
    for k, v in pairs(out) do
        if k ~= "loss" then
            io["out." .. k] = v
        end
    end
    model:save_pretrained(out_dir .. "/" .. name)
    tide.save(out_dir .. "/" .. name .. ".io.safetensors", io)
    print("saved " .. name)
end
for _, name in ipairs({ "base", "cls", "reg", "mlm" }) do
    local c = REF.cases[name]
    run(name, bert[c.model].from_pretrained("spec/" .. c.dir), c)
end
tide.manual_seed(7)
local config = { vocab_size = 64, hidden_size = 24, num_hidden_layers = 2,
    num_attention_heads = 3, intermediate_size = 40, max_position_embeddings = 16,
    hidden_act = "gelu_new", pad_token_id = 1, layer_norm_eps = 1e-7, initializer_range = 0.3,
    num_labels = 4 }
local c = REF.cases.base
run("fresh_model", bert.BertModel(config), c)
run("fresh_cls", bert.BertForSequenceClassification(config), c)
run("fresh_mlm", bert.BertForMaskedLM(config), c)
EOF
then
    cat "$TMP/lua.log"
    echo "0 passed, 1 failed"
    exit 1
fi

"$PY" - "$TMP" <<'EOF' >"$TMP/py.out" 2>"$TMP/py.log"
import json, os, sys, warnings
warnings.filterwarnings("ignore")
import torch
from safetensors.torch import load_file
import transformers
from transformers.utils import logging
logging.set_verbosity_error()

tmp = sys.argv[1]
passed = failed = 0
for name in ("base", "cls", "reg", "mlm", "fresh_model", "fresh_cls", "fresh_mlm"):
    d = os.path.join(tmp, name)
    try:
        arch = json.load(open(os.path.join(d, "config.json")))["architectures"][0]
        cls = getattr(transformers, arch)
        model, info = cls.from_pretrained(d, output_loading_info=True)
        model.eval()
        io = load_file(d + ".io.safetensors")
        keys = [k for k in ("missing_keys", "unexpected_keys", "mismatched_keys") if info[k]]
        if keys:
            raise AssertionError("; ".join("%s %s" % (k, info[k]) for k in keys))
        with torch.no_grad():
            out = model(input_ids=io["input_ids"], attention_mask=io["attention_mask"],
                        token_type_ids=io["token_type_ids"])
        worst = 0.0
        for k, v in io.items():
            if k.startswith("out."):
                got = getattr(out, k[4:])
                if got.shape != v.shape:
                    raise AssertionError("%s: shape %s, tide %s" % (k, got.shape, v.shape))
                worst = max(worst, (got - v).abs().max().item())
        if worst > 1e-5:
            raise AssertionError("max abs diff %.3g" % worst)
        passed += 1
        print("ok   %s (%s, max abs diff %.2g)" % (name, arch, worst))
    except Exception as e:
        failed += 1
        print("FAIL %s: %s" % (name, e))
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
EOF
rc=$?
cat "$TMP/py.out"
if ! grep -q "^[0-9]* passed, [0-9]* failed$" "$TMP/py.out"; then
    cat "$TMP/py.log"
    echo "0 passed, 1 failed"
    exit 1
fi
exit $rc
