"""gpu_bert_encode.py: the reference of bench/gpu_bert_encode.lua, which runs it with the
sentence-transformers directory it encoded with: the same fortunes encoded by
sentence-transformers over PyTorch on the same GPU, per dtype (the model cast with .to(dtype)),
batches of --batch-size sorted by length as its encode sorts them, at most --max-length tokens:

  encode  strings to vectors (SentenceTransformer.encode, tokenization included), sentences/s
  model   the same batches tokenized beforehand, the Transformer and Pooling modules alone
          (their forward, as encode calls it, without the normalisation), sentences/s and TFLOP/s
          counted as bench/gpu_bert_encode.lua counts them (the work of the real tokens)

Each best of 3 after a warm-up pass, under torch.inference_mode (encode's own mode). Prints
"result KEY VALUE" lines and one "PyTorch ..." line with its versions.

  python3 bench/gpu_bert_encode.py --model DIR [--data /usr/share/games/fortunes] [--n 4096]
      [--batch-size 64] [--max-length 128] [--dtypes float32,bfloat16,float16] [--device cuda]
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bert_encode import read_fortunes, sample, use_venv  # noqa: E402  (re-runs under .venv)

use_venv()

import torch  # noqa: E402


def best_time(fn, sync):
    fn()
    sync()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", default="/usr/share/games/fortunes")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--dtypes", default="float32,bfloat16,float16")
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()

    import sentence_transformers
    import transformers
    from sentence_transformers import SentenceTransformer

    sentences = sample(read_fortunes(a.data), a.n)
    dev = torch.device(a.device)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    print("PyTorch %s, transformers %s, sentence-transformers %s, on %s" % (
        torch.__version__, transformers.__version__, sentence_transformers.__version__,
        torch.cuda.get_device_name(dev) if dev.type == "cuda" else a.device), flush=True)
    for dtype in a.dtypes.split(","):
        st = SentenceTransformer(a.model, device=a.device)
        st.to(getattr(torch, dtype))
        st.max_seq_length = a.max_length

        encode_s = best_time(lambda: st.encode(sentences, batch_size=a.batch_size,
                                               convert_to_tensor=True), sync)

        # encode's batches: longest first (its _text_length: characters)
        order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
        cfg = st[0].auto_model.config
        H, I, L = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
        batches, flops = [], 0
        for b in range(0, len(order), a.batch_size):
            feats = st.tokenize([sentences[i] for i in order[b:b + a.batch_size]])
            feats = {k: v.to(dev) for k, v in feats.items()}
            batches.append(feats)
            for n in feats["attention_mask"].sum(1).tolist():
                flops += L * (2 * n * H * (4 * H + 2 * I) + 4 * n * n * H)
        body = torch.nn.Sequential(st[0], st[1])

        def run_model():
            with torch.inference_mode():
                for feats in batches:
                    body(dict(feats))

        model_s = best_time(run_model, sync)
        print("result torch_bert_encode_%s_sents_per_s %.1f" % (dtype, len(sentences) / encode_s))
        print("result torch_bert_model_%s_sents_per_s %.1f" % (dtype, len(sentences) / model_s))
        print("result torch_bert_model_%s_tflops %.3f" % (dtype, flops / model_s / 1e12),
              flush=True)
        del st, body, batches
        if dev.type == "cuda":
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
