"""bert_finetune.py: the PyTorch side of bench/bert_finetune.lua: training steps of
all-MiniLM-L6-v2 (models/, `make models`) under a new 13-class head
(transformers' BertForSequenceClassification.from_pretrained(dir, num_labels=13)), the step of
examples/bert_classify.lua: forward in train mode (dropout on), cross-entropy, backward,
AdamW (lr 5e-5, weight decay 0.01). The batch: --batch-size fortunes spread over the corpus
(bench/bert_encode.py's sample), padded or cut to exactly --max-length tokens, labels k % 13;
with --fill, each text is its fortune and the next seven, so that every row is cut full.

Prints "result step_s SECONDS" (the mean of --steps steps after one warm-up step) and the
process's memory in kB: "result rss_base KB" (resident before the first step: interpreter,
libraries, model, batch) and "result rss_peak KB" (VmHWM after the loop). Thread setting:
TIDE_BENCH_THREADS (bench/compare.lua's rule). Runs itself under .venv (tools/pyenv.sh).

  .venv/bin/python bench/bert_finetune.py [--steps 3] [--batch-size 32] [--max-length 128]
      [--model models/all-MiniLM-L6-v2] [--data /usr/share/games/fortunes] [--amp] [--fill]

--amp: the forward and the loss under torch.autocast("cpu", dtype=torch.bfloat16), PyTorch's
CPU AMP recipe (no GradScaler for bfloat16); parameters, gradients and AdamW stay float32.
"""
import argparse
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bert_encode import read_fortunes, sample, use_venv  # noqa: E402  (re-runs under .venv)

use_venv()

import torch  # noqa: E402
import torch_ref  # noqa: E402

CLASSES = 13


def status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--model", default="models/all-MiniLM-L6-v2")
    ap.add_argument("--data", default="/usr/share/games/fortunes")
    ap.add_argument("--amp", action="store_true")
    ap.add_argument("--fill", action="store_true")
    a = ap.parse_args()

    torch_ref.setup()
    torch.manual_seed(0)
    from transformers import BertForSequenceClassification, BertTokenizerFast
    from transformers.utils import logging
    logging.set_verbosity_error()
    tok = BertTokenizerFast.from_pretrained(a.model)
    model = BertForSequenceClassification.from_pretrained(a.model, num_labels=CLASSES)
    model.train()
    fortunes = read_fortunes(a.data)
    texts = sample(fortunes, a.batch_size)
    if a.fill:  # sample's fortune and the next seven: no padding left at 128 tokens
        n = len(fortunes)
        texts = [" ".join(fortunes[((i * n) // len(texts) + j) % n] for j in range(8))
                 for i in range(len(texts))]
    enc = tok(texts, padding="max_length", truncation=True, max_length=a.max_length,
              return_tensors="pt")
    labels = torch.tensor([k % CLASSES for k in range(len(texts))])
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.amp):
            logits = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                           token_type_ids=enc["token_type_ids"]).logits
            loss = loss_fn(logits, labels)
        loss.backward()
        opt.step()
        return loss.item()

    base = status_kb("VmRSS")
    step()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        loss = step()
    dt = (time.perf_counter() - t0) / a.steps
    assert loss == loss, "loss is NaN"
    torch_ref.report("step_s", dt)
    torch_ref.report("rss_base", base)
    torch_ref.report("rss_peak", status_kb("VmHWM"))


if __name__ == "__main__":
    main()
