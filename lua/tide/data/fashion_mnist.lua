--- tide.data.fashion_mnist(dir [, opts]) -> train, test, classes
--
-- Reads the four IDX files of Fashion-MNIST (or MNIST) from dir, each plain or gzipped
-- (`train-images-idx3-ubyte[.gz]`, `train-labels-idx1-ubyte[.gz]`, `t10k-images-idx3-ubyte[.gz]`,
-- `t10k-labels-idx1-ubyte[.gz]`; Debian's dataset-fashion-mnist installs them in
-- /usr/share/datasets/fashion-mnist, the default dir).
--
--   train, test  TensorDatasets of (image, label) on the CPU:
--                image: float32 in [0, 1], shape [N, 1, 28, 28] ([N, 784] with
--                opts.flatten = true); N = 60000 and 10000.
--                label: int64 class in 1..10 — the files hold 0-based labels; tide adds 1,
--                since every index in tide is 1-based (CrossEntropyLoss targets, argmax).
--   classes      the 10 class names, classes[label].
--
-- Every file's magic number (0x00000803 images, 0x00000801 labels), dims and length are
-- checked; a bad file raises "tide: fashion_mnist: <file>: ..." saying what is wrong.
local compat = require("tide._compat")

local core = require("tide.core")
local files = require("tide._files")
local raise = require("tide.autograd.raise")

local CLASSES = { "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
    "Sneaker", "Bag", "Ankle boot" }

local DEFAULT_DIR = "/usr/share/datasets/fashion-mnist"

-- raised without a position: the exported function re-raises at the caller's line
local function fail(msg, ...)
    error("tide: fashion_mnist: " .. string.format(msg, ...), 0)
end

local function exists(path)
    local io = package.loaded.io -- the io library, when the host opened it (not in a sandbox)
    if not io then
        fail("the io library is not available in this Lua state, and tide reads and writes "
            .. "files only where it is; the host opens it with luaL_openlibs or "
            .. "luaL_requiref(L, \"io\", luaopen_io, 1)")
    end
    return files.exists(path)
end

-- the plain file, else the gzipped one
local function locate(dir, name)
    for _, p in ipairs({ dir .. "/" .. name, dir .. "/" .. name .. ".gz" }) do
        if exists(p) then
            return p
        end
    end
    fail("%s: %s[.gz] not found; install the Debian package dataset-fashion-mnist "
        .. "(apt-get install dataset-fashion-mnist) or pass the directory that holds the four "
        .. "IDX files", dir, name)
end

local function read(path, magic)
    return core.idx_load(path, "fashion_mnist", magic)
end

local function split(dir, prefix, flatten)
    local ipath = locate(dir, prefix .. "-images-idx3-ubyte")
    local lpath = locate(dir, prefix .. "-labels-idx1-ubyte")
    local images = read(ipath, 0x00000803)
    local labels = read(lpath, 0x00000801)
    local n, h, w = images:size(1), images:size(2), images:size(3)
    if labels:size(1) ~= n then
        fail("%s: %d labels, but %s holds %d images; the two files do not belong together",
            lpath, labels:size(1), ipath, n)
    end
    if n > 0 and labels:max():item() > 9 then
        fail("%s: label %d out of range 0..9; the file is damaged", lpath,
            compat.tointeger(labels:max():item()))
    end
    local x = images:to(core.get_default_dtype()):div(255)
    x = flatten and x:view(n, h * w) or x:view(n, 1, h, w)
    local y = labels:long() + 1
    return x, y
end

local function load(dir, opts)
    dir = dir or DEFAULT_DIR
    opts = opts or {}
    if type(dir) ~= "string" then
        fail("dir must be a string (a directory), got %s", type(dir))
    end
    if type(opts) ~= "table" then
        fail("options must be a table such as {flatten = true}, got %s", type(opts))
    end
    local TensorDataset = require("tide.data.TensorDataset")
    local xtr, ytr = split(dir, "train", opts.flatten)
    local xte, yte = split(dir, "t10k", opts.flatten)
    local classes = {}
    for i, c in ipairs(CLASSES) do
        classes[i] = c
    end
    return TensorDataset(xtr, ytr), TensorDataset(xte, yte), classes
end

return function(dir, opts)
    local ok, train, test, classes = pcall(load, dir, opts)
    if not ok then
        local msg = tostring(train)
        raise(msg:match("tide:.*") or msg)
    end
    return train, test, classes
end
