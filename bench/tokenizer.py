"""tokenizer.py: Hugging Face's side of bench/tokenizer.lua (which runs it): BertTokenizerFast
(Rust tokenizers, one thread) on the texts bench/tokenizer.lua wrote, NUL-separated.

    .venv/bin/python bench/tokenizer.py --dir DIR --corpus FILE --ids OUT [--reps N]
    .venv/bin/python bench/tokenizer.py --dir DIR --unicode OUT

Prints "result KEY SECONDS" (median of --reps runs) for
    ids      tok(texts, return_token_type_ids=False, return_attention_mask=False): lists of ids
    batch64  tok(batch, padding=True, truncation=True, max_length=128, return_tensors="pt")
             for each batch of 64 texts: int64 tensors
    rust     tok.backend_tokenizer.encode_batch(texts): Rust's Encoding objects, no lists
and "tokens N" (ids, special tokens included); writes each text's ids to OUT, one line each.
--unicode writes, for every code point c (surrogates excepted), the normalised, pre-tokenised
words of "a" + c + "b" and of c alone, tab-separated, one line per code point, for
bench/tokenizer.lua's check of tide's character rules against tokenizers'."""
import argparse
import os
import statistics
import time

os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ["RAYON_NUM_THREADS"] = "1"
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from transformers import BertTokenizerFast  # noqa: E402


def timed(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--corpus")
    ap.add_argument("--ids")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--unicode")
    a = ap.parse_args()
    tok = BertTokenizerFast.from_pretrained(a.dir)
    if a.unicode:
        be = tok.backend_tokenizer

        def words(s):
            return " ".join(w for w, _ in be.pre_tokenizer.pre_tokenize_str(
                be.normalizer.normalize_str(s)))
        with open(a.unicode, "w", encoding="utf-8", errors="surrogatepass") as f:
            for cp in range(0x110000):
                if 0xD800 <= cp <= 0xDFFF:
                    continue
                ch = chr(cp)
                f.write("%d\t%s\t%s\n" % (cp, words("a" + ch + "b"), words(ch)))
        return
    with open(a.corpus, "rb") as f:
        texts = f.read().decode("utf-8").split("\0")
    t_ids, enc = timed(lambda: tok(texts, return_token_type_ids=False,
                                   return_attention_mask=False)["input_ids"], a.reps)
    batches = [texts[i:i + 64] for i in range(0, len(texts), 64)]

    def batch64():
        for b in batches:
            tok(b, padding=True, truncation=True, max_length=128, return_tensors="pt")
    t_b64, _ = timed(batch64, a.reps)
    t_rust, _ = timed(lambda: tok.backend_tokenizer.encode_batch(texts), a.reps)
    print("result ids %.6f" % t_ids)
    print("result batch64 %.6f" % t_b64)
    print("result rust %.6f" % t_rust)
    print("tokens %d" % sum(len(x) for x in enc))
    if a.ids:
        with open(a.ids, "w") as f:
            for ids in enc:
                f.write(" ".join(map(str, ids)) + "\n")


if __name__ == "__main__":
    main()
