-- tide.profiler.hooks: where tide's own layers open ranges for a recording profiler. While
-- tide.profiler records, open(name) -> a range and close(range) are set (the recorder's);
-- otherwise both are nil, and a layer pays one field test (the autograd engine per node, the
-- optimizers per step). Loading this table loads nothing of the profiler.
return { open = nil, close = nil }
