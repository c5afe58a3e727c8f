"""cnn_step.py: the PyTorch reference for bench/cnn_step.lua (the model and loop are in
mlp_step.py). Usage: cnn_step.py ITERS REPS BATCH...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp_step import main  # noqa: E402

main("cnn", sys.argv[1:])
