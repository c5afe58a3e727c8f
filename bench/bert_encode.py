"""bert_encode.py: the references of bench/bert_encode.lua: all-MiniLM-L6-v2 (models/, `make
models`) encoding fortunes into sentence vectors, as sentence-transformers' encode does it
(batches of sentences of similar length: sorted by length, encoded, put back in input order;
mean pooling, then normalisation), timed from the strings to the [N, 384] vectors
(tokenization included):

  encode      sentence-transformers 3.2.1 over PyTorch (its SentenceTransformer.encode)
  encode_ort  ONNX Runtime: the same BertModel exported by torch.onnx.export (cached in
              build/bench/<model>-<hash>.onnx), run by onnxruntime, with the same tokenizer,
              order and pooling

Run by bench/bert_encode.lua under each thread setting of bench/compare.lua (TIDE_BENCH_THREADS:
torch.set_num_threads, and ONNX Runtime's intra_op_num_threads), with the pinned venv
(.venv, tools/pyenv.sh). Prints "result KEY SECONDS" lines; with --vectors PATH also writes
sentence-transformers' vectors (safetensors, key "vectors") for tide's to be checked against.

  .venv/bin/python bench/bert_encode.py [--n 1024] [--batch-size 64] [--max-length 128]
      [--model models/all-MiniLM-L6-v2] [--data /usr/share/games/fortunes] [--vectors PATH]
      [--first N] [--no-torch] [--no-ort] [--dtype float32|bfloat16]

--dtype bfloat16: sentence-transformers' model cast with .to(torch.bfloat16) (PyTorch's CPU
bfloat16 linear runs on its bundled oneDNN); ONNX Runtime has no bfloat16 CPU kernels, so it
is left out then.
"""
import argparse
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def use_venv():
    """bench/compare.lua starts references with /usr/bin/python3: run again under the pinned
    venv (.venv, tools/pyenv.sh) when this python lacks sentence-transformers"""
    try:
        import sentence_transformers  # noqa: F401
        return
    except ImportError:
        pass
    venv = os.path.join(os.path.dirname(HERE), ".venv")
    py = os.path.join(venv, "bin", "python")
    if os.path.exists(py) and os.path.realpath(sys.prefix) != os.path.realpath(venv):
        os.execv(py, [py] + sys.argv)
    sys.exit("%s: sentence-transformers not found; sh tools/pyenv.sh makes .venv" % sys.argv[0])


use_venv()

import torch  # noqa: E402
import torch_ref  # noqa: E402


def read_fortunes(path):
    """every fortune of the plain-text files of path in name order (bench/bert_encode.lua's)"""
    names = sorted(n for n in os.listdir(path)
                   if not n.endswith((".dat", ".u8")) and os.path.isfile(os.path.join(path, n)))
    out = []
    for name in names:
        with open(os.path.join(path, name), "rb") as f:
            text = f.read().decode("utf-8")
        for piece in ("\n" + text).split("\n%\n"):
            piece = piece.strip(" \t\n\r\f\v")  # ASCII whitespace, as Lua's %s
            if piece and piece != "%":
                out.append(piece)
    return out


def sample(fortunes, n):
    """n fortunes spread evenly over the list (all of them when n is 0 or too large)"""
    total = len(fortunes)
    if n <= 0 or n >= total:
        return list(fortunes)
    return [fortunes[(i * total) // n] for i in range(n)]


def export_onnx(st, path):
    """the Transformer module's BertModel as ONNX, inputs [B, T] int64, output last_hidden_state"""
    bert = st[0].auto_model.eval()
    ids = torch.ones(2, 8, dtype=torch.int64)
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(bert, (ids, torch.ones_like(ids), torch.zeros_like(ids)), tmp,
                          input_names=["input_ids", "attention_mask", "token_type_ids"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={k: {0: "batch", 1: "seq"} for k in
                                        ("input_ids", "attention_mask", "token_type_ids",
                                         "last_hidden_state")},
                          opset_version=14, do_constant_folding=True)
    os.replace(tmp, path)


def ort_encode(sess, tokenizer, sentences, batch_size, max_length):
    import numpy as np
    order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))  # as st.encode
    out = [None] * len(sentences)
    for b in range(0, len(order), batch_size):
        idx = order[b:b + batch_size]
        enc = tokenizer([sentences[i] for i in idx], padding=True, truncation=True,
                        max_length=max_length, return_tensors="np")
        feeds = {k: enc[k].astype(np.int64) for k in ("input_ids", "attention_mask",
                                                      "token_type_ids")}
        h = sess.run(None, feeds)[0]
        m = feeds["attention_mask"][:, :, None].astype(np.float32)
        v = (h * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
        v = v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)
        for j, i in enumerate(idx):
            out[i] = v[j]
    return np.stack(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--model", default="models/all-MiniLM-L6-v2")
    ap.add_argument("--data", default="/usr/share/games/fortunes")
    ap.add_argument("--vectors")
    ap.add_argument("--first", type=int, default=0, help="only the first N of the sample")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    a = ap.parse_args()
    if a.dtype != "float32":
        a.no_ort = True

    torch_ref.setup()
    threads = torch.get_num_threads()
    from sentence_transformers import SentenceTransformer
    st = SentenceTransformer(a.model, device="cpu")
    st.max_seq_length = a.max_length
    if a.dtype == "bfloat16":
        st.to(torch.bfloat16)
    sentences = sample(read_fortunes(a.data), a.n)
    if a.first > 0:
        sentences = sentences[:a.first]
    warm = sentences[:a.batch_size]

    if not a.no_torch:
        st.encode(warm, batch_size=a.batch_size, convert_to_tensor=True)
        t0 = time.perf_counter()
        vec = st.encode(sentences, batch_size=a.batch_size, convert_to_tensor=True)
        torch_ref.report("encode", time.perf_counter() - t0)
        if a.vectors:
            from safetensors.torch import save_file
            save_file({"vectors": vec.float().contiguous()}, a.vectors)

    if not a.no_ort:
        import onnxruntime as ort
        # cached per model: its name, and a hash of its config and its weights file's size
        import hashlib
        h = hashlib.sha256()
        with open(os.path.join(a.model, "config.json"), "rb") as f:
            h.update(f.read())
        h.update(str(os.path.getsize(os.path.join(a.model, "model.safetensors"))).encode())
        path = os.path.join("build", "bench", "%s-%s.onnx" % (
            os.path.basename(os.path.normpath(a.model)), h.hexdigest()[:12]))
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            export_onnx(st, path)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        tok = st.tokenizer
        ort_encode(sess, tok, warm, a.batch_size, a.max_length)
        t0 = time.perf_counter()
        ort_encode(sess, tok, sentences, a.batch_size, a.max_length)
        torch_ref.report("encode_ort", time.perf_counter() - t0)


if __name__ == "__main__":
    main()
