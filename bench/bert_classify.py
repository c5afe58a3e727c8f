"""bert_classify.py: the PyTorch twin of examples/bert_classify.lua, for bench/bert_classify.lua.

The same fine-tune, step for step: the fortune files with at least --min-fortunes fortunes
become the classes; the fortunes are shuffled by the same seeded Park-Miller generator and
split 80/20; all-MiniLM-L6-v2 under transformers' BertForSequenceClassification with a new
head; AdamW (weight decay 0.01) with the step size rising linearly over the first 10% of the
steps and falling linearly to 0; gradients clipped at norm 1.0; cross-entropy; validation in
length-sorted batches of 64. What differs is only what each framework draws from its own
random generator (the head's initial weights, dropout masks).

Prints the example's lines, the last "val accuracy: 0.xxxx", and "result step_s SECONDS" (the
mean time of a training step). Thread setting: TIDE_BENCH_THREADS (bench/compare.lua's rule).
Runs itself under .venv (tools/pyenv.sh).

  .venv/bin/python bench/bert_classify.py [--epochs 3] [--lr 5e-5] [--batch-size 32]
      [--max-length 128] [--limit 0] [--val-limit 0] [--seed 1] [--min-fortunes 500]
      [--model models/all-MiniLM-L6-v2] [--data /usr/share/games/fortunes]
"""
import argparse
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bert_encode import use_venv  # noqa: E402  (re-runs under .venv)

use_venv()

import torch  # noqa: E402
import torch_ref  # noqa: E402


def read_fortunes(path):
    """the fortunes of each plain-text file of path, by file name (the example's reader)"""
    names = sorted(n for n in os.listdir(path)
                   if not n.endswith((".dat", ".u8")) and os.path.isfile(os.path.join(path, n)))
    by_file = {}
    for name in names:
        with open(os.path.join(path, name), "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
        pieces = []
        for piece in ("\n" + text).split("\n%\n"):
            piece = piece.strip(" \t\n\r\f\v")  # ASCII whitespace, as Lua's %s
            if piece and piece != "%":
                pieces.append(piece)
        by_file[name] = pieces
    return by_file, names


def rng(seed):
    """the example's Park-Miller generator: an integer in 1..n per call"""
    s = (seed * 48271 + 11) % 2147483647
    if s == 0:
        s = 1
    state = [s]

    def rand(n):
        state[0] = state[0] * 48271 % 2147483647
        return state[0] % n + 1

    return rand


def shuffle(items, rand):
    for i in range(len(items), 1, -1):  # 1-based, as the example's loop
        j = rand(i)
        items[i - 1], items[j - 1] = items[j - 1], items[i - 1]
    return items


def evaluate(model, tok, examples, max_length):
    model.eval()
    order = sorted(range(len(examples)), key=lambda i: (-len(examples[i][0].encode()), i))
    correct = 0
    with torch.no_grad():
        for first in range(0, len(order), 64):
            batch = [examples[i] for i in order[first:first + 64]]
            enc = tok([t for t, _ in batch], padding=True, truncation=True,
                      max_length=max_length, return_tensors="pt")
            pred = model(**enc).logits.argmax(1).tolist()
            correct += sum(1 for p, (_, label) in zip(pred, batch) if p == label)
    model.train()
    return correct / len(examples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--val-limit", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-fortunes", type=int, default=500)
    ap.add_argument("--exact", type=int, default=0)  # the example's --exact 1
    # the new head's initial weights, for the example's --init-head
    ap.add_argument("--save-head", default="")
    ap.add_argument("--model", default=os.path.join(os.path.dirname(HERE), "models",
                                                    "all-MiniLM-L6-v2"))
    ap.add_argument("--data", default="/usr/share/games/fortunes")
    o = ap.parse_args()
    torch_ref.setup()
    from transformers import BertForSequenceClassification, BertTokenizerFast

    by_file, names = read_fortunes(o.data)
    classes, examples = [], []
    for name in names:
        if len(by_file[name]) >= o.min_fortunes:
            classes.append(name)
            label = len(classes) - 1  # 0-based here, 1-based in Lua
            examples += [(text, label) for text in by_file[name]]
    shuffle(examples, rng(o.seed))
    n_train = len(examples) * 8 // 10
    train, val = [], []
    for i, e in enumerate(examples):
        if i < n_train:
            if o.limit == 0 or len(train) < o.limit:
                train.append(e)
        elif o.val_limit == 0 or len(val) < o.val_limit:
            val.append(e)
    print("%d classes, %d training and %d validation fortunes" % (len(classes), len(train),
                                                                   len(val)))

    torch.manual_seed(o.seed)
    tok = BertTokenizerFast.from_pretrained(o.model)
    model = BertForSequenceClassification.from_pretrained(o.model, num_labels=len(classes))
    model.train()
    if o.save_head:
        from safetensors.torch import save_file
        save_file({"classifier." + k: v.detach().contiguous()
                   for k, v in model.classifier.state_dict().items()}, o.save_head)
    if o.exact == 1:
        for m in model.modules():
            if isinstance(m, torch.nn.Dropout):
                m.p = 0.0
        with torch.no_grad():
            model.classifier.weight.zero_()
    steps_per_epoch = -(-len(train) // o.batch_size)
    total = steps_per_epoch * o.epochs
    warmup = total // 10
    opt = torch.optim.AdamW(model.parameters(), lr=o.lr, weight_decay=0.01)

    def lr_lambda(step):
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
    rand = rng(o.seed + 1)
    acc, step_time, steps = 0.0, 0.0, 0
    for epoch in range(1, o.epochs + 1):
        shuffle(train, rand)
        t0, loss_sum, seen = time.perf_counter(), 0.0, 0
        for step in range(steps_per_epoch):
            batch = train[step * o.batch_size:(step + 1) * o.batch_size]
            enc = tok([t for t, _ in batch], padding=True, truncation=True,
                      max_length=o.max_length, return_tensors="pt")
            logits = model(**enc).logits
            loss = torch.nn.functional.cross_entropy(
                logits, torch.tensor([label for _, label in batch]))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            if o.exact == 1:
                print("step %d loss %.6f" % (steps + step + 1, loss.item()), flush=True)
            loss_sum += loss.item() * len(batch)
            seen += len(batch)
        train_s = time.perf_counter() - t0
        step_time += train_s
        steps += steps_per_epoch
        t0 = time.perf_counter()
        acc = evaluate(model, tok, val, o.max_length)
        print("epoch %d/%d: train loss %.4f, %.1f s (%.2f s/step); val accuracy %.4f "
              "(%d fortunes, %.1f s)" % (epoch, o.epochs, loss_sum / seen, train_s,
                                         train_s / steps_per_epoch, acc, len(val),
                                         time.perf_counter() - t0), flush=True)
    print("val accuracy: %.4f" % acc)
    torch_ref.report("step_s", step_time / steps)
    torch_ref.report("accuracy", acc)


if __name__ == "__main__":
    main()
