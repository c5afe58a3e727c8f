"""tensorboard_check.py DIR — reads the log spec/support/tensorboard_write.lua wrote with tide
through TensorBoard's own EventAccumulator and projector protos, and checks every entry against
the values written. Ends with "N passed, N failed". Run by tensorboard_check.sh with the pinned
virtualenv's python (tensorboard 2.18)."""
import io
import os
import sys
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from PIL import Image  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.plugins.hparams import metadata as hp_metadata  # noqa: E402
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig  # noqa: E402

root = sys.argv[1]
passed = failed = 0


def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s %s" % (what, detail))


def load(run):
    ea = EventAccumulator(os.path.join(root, run), size_guidance={
        "scalars": 0, "histograms": 0, "images": 0, "tensors": 0})
    ea.Reload()
    return ea


def f32(v):
    return float(np.float32(v))


main = load(".")
tags = main.Tags()
# scalars
loss = main.Scalars("loss")
check("loss steps", [e.step for e in loss] == [0, 1, 2, 3, 4], [e.step for e in loss])
check("loss values", [e.value for e in loss] == [f32(1 / (s + 1)) for s in range(5)],
      [e.value for e in loss])
lr = main.Scalars("lr")
check("lr with walltime", len(lr) == 1 and lr[0].step == 7 and lr[0].value == 0.5
      and lr[0].wall_time == 1234567890.5, lr)
for sub, v in (("acc_train", 0.5), ("acc_val", 0.25)):
    ev = load(sub).Scalars("acc")
    check("add_scalars " + sub, len(ev) == 1 and ev[0].step == 3 and ev[0].value == v, ev)
# histogram
h = main.Histograms("weights")
check("histogram count", len(h) == 1 and h[0].step == 1, h)
hv = h[0].histogram_value
check("histogram stats", (hv.min, hv.max, hv.num, hv.sum, hv.sum_squares) == (-5, 5, 11, 0, 110),
      hv)
check("histogram buckets", sum(hv.bucket) == 11 and len(hv.bucket) == len(hv.bucket_limit)
      and list(hv.bucket_limit) == sorted(hv.bucket_limit), hv)
check("histogram bucket limits bracket the values", hv.bucket_limit[0] < -5 + 1e-9
      and hv.bucket_limit[-1] >= 5, hv.bucket_limit)
# images
im = main.Images("gradient")
check("image event", len(im) == 1 and im[0].step == 2 and im[0].width == 5 and im[0].height == 4,
      im)
px = np.asarray(Image.open(io.BytesIO(im[0].encoded_image_string)))
want = np.zeros((4, 5, 3), dtype=np.uint8)
for c in range(3):
    for y in range(4):
        for x in range(5):
            want[y, x, c] = int(np.float32(np.float32((c + 2 * y + 3 * x) / 30) * 255))
check("image pixels", px.shape == (4, 5, 3) and (px == want).all(), px.shape)
bi = main.Images("batch")
bpx = np.asarray(Image.open(io.BytesIO(bi[0].encoded_image_string)))
check("add_images grid", bpx.shape == (2, 6, 3) and (bpx == 255).all(), bpx.shape)
# text
txt = main.Tensors("sample/text_summary")
check("text", len(txt) == 1 and txt[0].step == 3
      and txt[0].tensor_proto.string_val == [b"hello **world**"], txt)
check("text plugin", main.SummaryMetadata("sample/text_summary").plugin_data.plugin_name == "text")
# hparams
hp = load("hp")
meta = hp.PluginTagToContent("hparams")
check("hparams tags", sorted(meta) == sorted([hp_metadata.EXPERIMENT_TAG,
                                              hp_metadata.SESSION_START_INFO_TAG,
                                              hp_metadata.SESSION_END_INFO_TAG]), sorted(meta))
exp = hp_metadata.parse_experiment_plugin_data(meta[hp_metadata.EXPERIMENT_TAG])
check("hparams experiment", sorted(i.name for i in exp.hparam_infos) == ["lr", "opt"]
      and [m.name.tag for m in exp.metric_infos] == ["hparam/loss"], exp)
ssi = hp_metadata.parse_session_start_info_plugin_data(meta[hp_metadata.SESSION_START_INFO_TAG])
check("hparams values", ssi.hparams["lr"].number_value == 0.01
      and ssi.hparams["opt"].string_value == "adam", ssi)
sei = hp_metadata.parse_session_end_info_plugin_data(meta[hp_metadata.SESSION_END_INFO_TAG])
check("hparams session end", sei.status == 1, sei)
m = hp.Scalars("hparam/loss")
check("hparams metric", len(m) == 1 and m[0].value == 0.5, m)
# projector
cfg = text_format.Parse(open(os.path.join(root, "projector_config.pbtxt")).read(),
                        ProjectorConfig())
check("projector config", len(cfg.embeddings) == 1
      and cfg.embeddings[0].tensor_name == "default:00000"
      and list(cfg.embeddings[0].sprite.single_image_dim) == [3, 2], cfg)
e = cfg.embeddings[0]
mat = np.loadtxt(os.path.join(root, e.tensor_path), delimiter="\t")
check("tensors.tsv", mat.shape == (4, 3) and (mat == np.arange(12).reshape(4, 3) / 4).all(), mat)
labels = open(os.path.join(root, e.metadata_path)).read().split("\n")
check("metadata.tsv", labels == ["a", "b", "c", "d", ""], labels)
sprite = Image.open(os.path.join(root, e.sprite.image_path))
check("sprite.png", sprite.size == (6, 6), sprite.size)

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
