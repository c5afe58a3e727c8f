-- tide.utils.tensorboard — PyTorch's SummaryWriter (torch/utils/tensorboard/writer.py, 1.13):
-- the same names, defaults, directory layout and event records, so TensorBoard (and anything
-- that reads PyTorch's logs) reads tide's. Tensors may live on any device: each is copied to
-- the host once.
local tide = require("tide")
local core = require("tide.core")
local compat = require("tide._compat")
local args = require("tide.op_args")
local event_file = require("tide.utils.event_file")
local summary = require("tide.utils.summary")
local image = require("tide.utils.image")
local embedding = require("tide.utils.embedding")
local pb = require("tide.utils.protobuf")

local M = {}

local WRITER_OPTIONS = { "comment", "flush_secs", "max_queue", "filename_suffix", "purge_step" }

local fail = require("tide.autograd.raise") -- at the user's line
local unpack = compat.unpack

local function check_tag(op, tag, what)
    if type(tag) ~= "string" then
        fail(("tide: %s: expected %s (a string), got %s"):format(op, what or "a tag", type(tag)))
    end
end

local function check_step(op, step)
    if step ~= nil and not compat.is_integer(step) then
        fail(("tide: %s: step must be an integer (or nil), got %s"):format(op, tostring(step)))
    end
end

local function check_number(op, v, what)
    if type(v) ~= "number" then
        fail(("tide: %s: %s must be a number, got %s"):format(op, what, type(v)))
    end
end

-- a plain number from a number or a one-element tensor (PyTorch takes both)
local function scalar_of(op, v, what)
    if core.is_tensor(v) then
        if v:numel() ~= 1 then
            fail(("tide: %s: %s must be a number or a one-element tensor, got a tensor of %d "
                .. "elements"):format(op, what, v:numel()))
        end
        v = v:to("cpu"):item()
    end
    check_number(op, v, what)
    return v
end

local SummaryWriter = {}
SummaryWriter.__index = SummaryWriter

-- PyTorch's default log_dir: runs/<Mon><DD>_<HH>-<MM>-<SS>_<host><comment>
local function default_log_dir(comment)
    local host = core._host_info()
    return "runs/" .. os.date("%b%d_%H-%M-%S") .. "_" .. host .. comment
end

--- SummaryWriter([log_dir][, {comment = "", flush_secs = 120, max_queue = 10,
--- filename_suffix = ""}]) makes log_dir and its first event file.
function M.SummaryWriter(log_dir, opts)
    local op = "SummaryWriter"
    if type(log_dir) == "table" and opts == nil then
        log_dir, opts = nil, log_dir
    end
    if log_dir ~= nil and type(log_dir) ~= "string" then
        fail(("tide: SummaryWriter: log_dir must be a string (or nil for runs/<date>_<host>), "
            .. "got %s"):format(type(log_dir)))
    end
    opts = args.options(op, opts, WRITER_OPTIONS, "{flush_secs = 30}")
    local comment = opts.comment or ""
    if type(comment) ~= "string" then
        fail("tide: SummaryWriter: comment must be a string, got " .. type(comment))
    end
    local fw = { max_queue = opts.max_queue or 10, flush_secs = opts.flush_secs or 120,
        filename_suffix = opts.filename_suffix or "" }
    if not compat.is_integer(fw.max_queue) or fw.max_queue < 1 then
        fail(("tide: SummaryWriter: max_queue must be an integer >= 1, got %s")
            :format(tostring(fw.max_queue)))
    end
    if type(fw.flush_secs) ~= "number" or fw.flush_secs < 0 then
        fail(("tide: SummaryWriter: flush_secs must be a number >= 0, got %s")
            :format(tostring(fw.flush_secs)))
    end
    if type(fw.filename_suffix) ~= "string" then
        fail("tide: SummaryWriter: filename_suffix must be a string, got "
            .. type(fw.filename_suffix))
    end
    if log_dir == nil or log_dir == "" then
        log_dir = default_log_dir(comment)
    end
    local purge = opts.purge_step
    if purge ~= nil and not (compat.is_integer(purge) and purge >= 0) then
        fail(("tide: SummaryWriter: purge_step must be an integer >= 0, got %s")
            :format(tostring(purge)))
    end
    -- PyTorch's attributes: max_queue, flush_secs, filename_suffix (purge_step is None once the
    -- file is open, so nil here)
    local w = setmetatable({ log_dir = log_dir, _opts = fw, _writers = {}, _order = {},
        max_queue = fw.max_queue, flush_secs = fw.flush_secs,
        filename_suffix = fw.filename_suffix }, SummaryWriter)
    w._file = event_file.open(log_dir, fw, op)
    if purge then -- TensorBoard drops the records of steps >= purge_step written before
        local now = core._unix_time()
        w._file:add_event(event_file.event(now, purge, pb.bytes(3, "brain.Event:2")))
        -- SessionLog { status = 1 (START = 1) } as the Event's session_log = 7
        w._file:add_event(event_file.event(now, purge, pb.bytes(7, pb.varint(1, 1), true)))
    end
    return w
end

SummaryWriter.__close = function(w)
    w:close()
end

-- the file writer of a sub-directory (add_scalars), made on first use
function SummaryWriter:_sub_writer(dir)
    local fw = self._writers[dir]
    if not fw then
        fw = event_file.open(dir, self._opts, "add_scalars")
        self._writers[dir] = fw
        self._order[#self._order + 1] = dir
    end
    return fw
end

function SummaryWriter:_check_open(op)
    if not self._file then
        fail(("tide: %s: the SummaryWriter is closed; make a new one"):format(op))
    end
end

function SummaryWriter:_add(op, fw, sum, step, walltime)
    self:_check_open(op)
    check_step(op, step)
    if walltime ~= nil then
        check_number(op, walltime, "walltime")
    end
    fw:add_event(event_file.event(walltime or core._unix_time(), step, pb.bytes(5, sum, true)))
end

--- the log directory (PyTorch's get_logdir)
function SummaryWriter:get_logdir()
    return self.log_dir
end

--- add_scalar(tag, value, step[, walltime | {walltime =, new_style = false,
--- double_precision = false}]); value a number or a one-element tensor
function SummaryWriter:add_scalar(tag, value, step, walltime)
    local op = "add_scalar"
    check_tag(op, tag)
    value = scalar_of(op, value, "value")
    local sum
    if type(walltime) == "table" then
        local o = args.options(op, walltime, { "walltime", "new_style", "double_precision" },
            "{new_style = true}")
        walltime = o.walltime
        sum = o.new_style and summary.scalar_tensor(tag, value, o.double_precision)
    end
    self:_add(op, self._file, sum or summary.scalar(tag, value), step, walltime)
end

--- add_scalars(main_tag, {tag = value, ...}, step[, walltime]): each tag in its own run
--- directory log_dir/<main_tag with / as _>_<tag>, under the tag main_tag (as PyTorch)
function SummaryWriter:add_scalars(main_tag, values, step, walltime)
    local op = "add_scalars"
    self:_check_open(op)
    check_tag(op, main_tag, "a main tag")
    if type(values) ~= "table" then
        fail("tide: add_scalars: expected a table {tag = value, ...}, got " .. type(values))
    end
    -- every value, the step and the walltime checked before any sub-writer is made or written
    -- (a refused call leaves no run behind)
    check_step(op, step)
    if walltime ~= nil then
        check_number(op, walltime, "walltime")
    end
    walltime = walltime or core._unix_time()
    local tags, vals = {}, {}
    for k in pairs(values) do
        check_tag(op, k, "tags (the table's keys)")
        tags[#tags + 1] = k
    end
    table.sort(tags)
    for i, k in ipairs(tags) do
        vals[i] = scalar_of(op, values[k], "the value of " .. k)
    end
    for i, k in ipairs(tags) do
        local dir = self.log_dir .. "/" .. main_tag:gsub("/", "_") .. "_" .. k
        self:_add(op, self:_sub_writer(dir), summary.scalar(main_tag, vals[i]), step, walltime)
    end
end

--- add_histogram(tag, values, step[, {bins = "tensorflow", walltime =}]); bins "tensorflow"
--- (PyTorch's default) or a number of equal bins between the minimum and the maximum
local BIN_NAMES = { tensorflow = true, auto = true, fd = true, sturges = true }

--- bins: "tensorflow", numpy's "auto" / "fd" / "sturges", a count of equal bins, or a list of
--- increasing edges; max_bins: at most that many (neighbouring bins summed, as PyTorch)
function SummaryWriter:add_histogram(tag, values, step, opts)
    local op = "add_histogram"
    check_tag(op, tag)
    opts = args.options(op, opts, { "bins", "walltime", "max_bins" },
        "{bins = \"tensorflow\"}")
    local bins = opts.bins or "tensorflow"
    local ok = BIN_NAMES[bins] or (compat.is_integer(bins) and bins >= 1)
    if type(bins) == "table" then
        ok = #bins >= 2
        for i = 1, #bins do
            ok = ok and type(bins[i]) == "number" and (i == 1 or bins[i] >= bins[i - 1])
        end
    end
    if not ok then
        fail(("tide: add_histogram: bins must be \"tensorflow\", \"auto\", \"fd\", \"sturges\", "
            .. "a positive integer or a list of increasing edges, got %s"):format(tostring(bins)))
    end
    local max_bins = opts.max_bins
    if max_bins ~= nil and not (compat.is_integer(max_bins) and max_bins >= 1) then
        fail(("tide: add_histogram: max_bins must be a positive integer, got %s")
            :format(tostring(max_bins)))
    end
    local vals
    if core.is_tensor(values) then
        if values:numel() == 0 then
            fail("tide: add_histogram: the tensor has no element")
        end
        vals = tide.no_grad(function()
            return values:to("cpu", "float64"):reshape(-1):totable()
        end)
    elseif type(values) == "table" then
        if #values == 0 then
            fail("tide: add_histogram: the list has no element")
        end
        for i = 1, #values do
            if type(values[i]) ~= "number" then
                fail(("tide: add_histogram: values[%d] is a %s; pass a list of numbers or one "
                    .. "tensor"):format(i, core.is_tensor(values[i]) and "tensor" or
                    type(values[i])))
            end
        end
        vals = values
    else
        fail("tide: add_histogram: expected a tensor or a list of numbers, got " .. type(values))
    end
    local h = summary.histogram_values(vals, bins, max_bins)
    self:_add(op, self._file, summary.histogram(tag, h), step, opts.walltime)
end

-- an image summary of img, laid out as dataformats says (image.to_hwc_uint8 makes it an
-- (H, W, C) uint8 host tensor)
local function image_summary(op, tag, img, dataformats)
    local hwc = tide.no_grad(function()
        return image.to_hwc_uint8(op, img, dataformats)
    end)
    return summary.image(tag, hwc:size(1), hwc:size(2), hwc:size(3), core._png_encode(hwc))
end

--- add_image(tag, img, step[, {dataformats = "CHW", walltime =}]): float values in [0, 1]
--- (scaled by 255, truncated) or uint8 in [0, 255]
function SummaryWriter:add_image(tag, img, step, opts)
    local op = "add_image"
    check_tag(op, tag)
    opts = args.options(op, opts, { "dataformats", "walltime" }, "{dataformats = \"HWC\"}")
    if not core.is_tensor(img) then
        fail("tide: add_image: expected an image tensor, got " .. type(img))
    end
    self:_add(op, self._file, image_summary(op, tag, img, opts.dataformats or "CHW"), step,
        opts.walltime)
end

--- add_images(tag, imgs, step[, {dataformats = "NCHW", walltime =}]): one grid of the batch,
--- 8 images a row without padding (TensorBoard's make_grid)
function SummaryWriter:add_images(tag, imgs, step, opts)
    local op = "add_images"
    check_tag(op, tag)
    opts = args.options(op, opts, { "dataformats", "walltime" }, "{dataformats = \"NHWC\"}")
    if not core.is_tensor(imgs) or imgs:dim() ~= 4 then
        fail("tide: add_images: expected a 4-D tensor of images (N, C, H, W)")
    end
    self:_add(op, self._file, image_summary(op, tag, imgs, opts.dataformats or "NCHW"), step,
        opts.walltime)
end

--- add_text(tag, text, step[, walltime]): shown by TensorBoard's text plugin as Markdown
function SummaryWriter:add_text(tag, text, step, walltime)
    check_tag("add_text", tag)
    if type(text) ~= "string" then
        fail("tide: add_text: expected the text as a string, got " .. type(text))
    end
    self:_add("add_text", self._file, summary.text(tag, text), step, walltime)
end

-- the sorted keys of t, each checked to be a string with a value of an allowed type
local function sorted_keys(op, t, what, allow)
    if type(t) ~= "table" then
        fail(("tide: %s: expected %s as a table {name = value}, got %s"):format(op, what, type(t)))
    end
    local keys = {}
    for k, v in pairs(t) do
        if type(k) ~= "string" or not allow[type(v)] then
            fail(("tide: %s: %s must map names to %s; %s = %s"):format(op, what,
                allow.string and "numbers, strings or booleans" or allow.table and "tables"
                or "numbers", tostring(k), type(v)))
        end
        keys[#keys + 1] = k
    end
    table.sort(keys)
    return keys
end

--- add_hparams(hparams, metrics[, {run_name =}]): a run log_dir/<run_name or the Unix time>
--- holding the hparams plugin's experiment and session records and one scalar per metric
function SummaryWriter:add_hparams(hparams, metrics, opts)
    local op = "add_hparams"
    self:_check_open(op)
    opts = args.options(op, opts, { "run_name" }, "{run_name = \"lr0.1\"}")
    if opts.run_name ~= nil and type(opts.run_name) ~= "string" then
        fail("tide: add_hparams: run_name must be a string, got " .. type(opts.run_name))
    end
    local names = sorted_keys(op, hparams, "hparams", { number = true, string = true,
        boolean = true })
    local mnames = sorted_keys(op, metrics, "metrics", { number = true })
    local exp, ssi, sei = summary.hparams(names, hparams, mnames)
    local run = opts.run_name or embedding.py_float(core._unix_time()) -- str(time.time())
    local w = M.SummaryWriter(self.log_dir .. "/" .. run,
        { max_queue = self._opts.max_queue, flush_secs = self._opts.flush_secs,
            filename_suffix = self._opts.filename_suffix })
    for _, s in ipairs({ exp, ssi, sei }) do
        w._file:add_event(event_file.event(core._unix_time(), nil, pb.bytes(5, s, true)))
    end
    for _, k in ipairs(mnames) do
        w:add_scalar(k, metrics[k])
    end
    w:close()
end

--- add_embedding(mat[, {metadata =, label_img =, global_step =, tag = "default"}]): the
--- projector's files under log_dir/<global_step, 5 digits>/<tag> and log_dir/projector_config.pbtxt
function SummaryWriter:add_embedding(mat, opts)
    self:_check_open("add_embedding")
    opts = args.options("add_embedding", opts, { "metadata", "label_img", "global_step", "tag",
        "metadata_header" }, "{metadata = labels}")
    self._projector = self._projector or {}
    embedding.add(self.log_dir, self._projector, mat, opts)
end

-- a Lua list of numbers from a tensor or a list (booleans count 1 / 0)
local function number_list(op, v, what)
    if core.is_tensor(v) then
        if v.dtype == "bool" then
            v = v:to("int64")
        end
        return tide.no_grad(function()
            return v:to("cpu", "float64"):reshape(-1):totable()
        end)
    elseif type(v) == "table" then
        local out = {}
        for i = 1, #v do
            local x = v[i]
            if type(x) == "boolean" then
                x = x and 1 or 0
            end
            if type(x) ~= "number" then
                fail(("tide: %s: %s[%d] is a %s; pass a tensor or a list of numbers")
                    :format(op, what, i, type(x)))
            end
            out[i] = x
        end
        return out
    end
    fail(("tide: %s: expected %s as a tensor or a list of numbers, got %s"):format(op, what,
        type(v)))
end

-- PyTorch's compute_curve (torch/utils/tensorboard/summary.py): predictions bucketed into
-- num_thresholds bins as np.histogram does, then tp, fp, tn, fn, precision, recall
local function compute_curve(labels, preds, n, weights)
    local hi = n - 1
    local edges = {}
    for i = 0, n do
        edges[i] = i == n and hi or hi * i / n
    end
    local tpb, fpb = {}, {}
    for i = 0, n - 1 do
        tpb[i], fpb[i] = 0, 0
    end
    for i = 1, #preds do
        local b = math.floor(preds[i] * hi)
        if b >= 0 and b <= hi then
            local k = math.floor(b * n / hi)
            if k >= n then
                k = n - 1
            end
            if b < edges[k] then
                k = k - 1
            elseif k ~= n - 1 and b >= edges[k + 1] then
                k = k + 1
            end
            local w = weights and weights[i] or 1
            tpb[k] = tpb[k] + labels[i] * w
            fpb[k] = fpb[k] + (1 - labels[i]) * w
        end
    end
    local tp, fp, tn, fn, prec, rec = {}, {}, {}, {}, {}, {}
    local ctp, cfp = 0, 0
    for k = n - 1, 0, -1 do
        ctp, cfp = ctp + tpb[k], cfp + fpb[k]
        tp[k + 1], fp[k + 1] = ctp, cfp
    end
    for k = 1, n do
        tn[k], fn[k] = fp[1] - fp[k], tp[1] - tp[k]
        prec[k] = tp[k] / math.max(1e-7, tp[k] + fp[k])
        rec[k] = tp[k] / math.max(1e-7, tp[k] + fn[k])
    end
    return { tp, fp, tn, fn, prec, rec }
end

-- a pr curve's options ({num_thresholds = 127, weights =, walltime =}, or PyTorch's positional
-- num_thresholds) and its num_thresholds, an integer >= least
local function pr_options(op, opts, least)
    if type(opts) == "number" then
        opts = { num_thresholds = opts }
    end
    opts = args.options(op, opts, { "num_thresholds", "weights", "walltime" },
        "{num_thresholds = 127}")
    local n = opts.num_thresholds or 127
    if not compat.is_integer(n) or n < least then
        fail(("tide: %s: num_thresholds must be an integer >= %d, got %s"):format(op, least,
            tostring(n)))
    end
    return opts, n
end

--- add_pr_curve(tag, labels, predictions[, step][, {num_thresholds = 127, weights =,
--- walltime =}]): the pr_curves plugin's record; labels 0/1 (or booleans), predictions in [0, 1]
function SummaryWriter:add_pr_curve(tag, labels, predictions, step, opts)
    local op = "add_pr_curve"
    check_tag(op, tag)
    local n
    opts, n = pr_options(op, opts, 2)
    local l = number_list(op, labels, "labels")
    local p = number_list(op, predictions, "predictions")
    if #l ~= #p then
        fail(("tide: add_pr_curve: labels has %d values and predictions %d; pass one label "
            .. "per prediction"):format(#l, #p))
    end
    for i = 1, #p do
        if not (p[i] >= 0 and p[i] <= 1) then
            fail(("tide: add_pr_curve: predictions[%d] = %s is outside [0, 1]; pass "
                .. "probabilities (e.g. F.softmax(output, 2)[{{}, c}])"):format(i, tostring(p[i])))
        end
    end
    local w = opts.weights ~= nil and number_list(op, opts.weights, "weights") or nil
    if w and #w ~= #p then
        fail(("tide: add_pr_curve: weights has %d values and predictions %d"):format(#w, #p))
    end
    self:_add(op, self._file, summary.pr_curve(tag, compute_curve(l, p, n, w), n), step,
        opts.walltime)
end

--- add_histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts[, step]
--- [, walltime]): a histogram from its statistics, as PyTorch's (the two lists equally long)
function SummaryWriter:add_histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                         bucket_counts, step, walltime)
    local op = "add_histogram_raw"
    check_tag(op, tag)
    local h = { min = min, max = max, num = num, sum = sum, sum_squares = sum_squares }
    for _, k in ipairs({ "min", "max", "num", "sum", "sum_squares" }) do
        h[k] = scalar_of(op, h[k], k)
    end
    h.bucket_limit = number_list(op, bucket_limits, "bucket_limits")
    h.bucket = number_list(op, bucket_counts, "bucket_counts")
    if #h.bucket_limit ~= #h.bucket then
        fail(("tide: add_histogram_raw: bucket_limits has %d values and bucket_counts %d; they "
            .. "must be equally long"):format(#h.bucket_limit, #h.bucket))
    end
    self:_add(op, self._file, summary.histogram(tag, h), step, walltime)
end

--- add_pr_curve_raw(tag, tp, fp, tn, fn, precision, recall[, step][, {num_thresholds = 127,
--- weights =, walltime =}]): the pr_curves record from its six lists (equally long)
function SummaryWriter:add_pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, step, opts)
    local op = "add_pr_curve_raw"
    check_tag(op, tag)
    local n
    opts, n = pr_options(op, opts, 1)
    local rows, names = { tp, fp, tn, fn, precision, recall },
        { "true_positive_counts", "false_positive_counts", "true_negative_counts",
            "false_negative_counts", "precision", "recall" }
    for i = 1, 6 do
        rows[i] = number_list(op, rows[i], names[i])
        if #rows[i] ~= #rows[1] or #rows[i] == 0 then
            fail(("tide: add_pr_curve_raw: %s has %d values and %s %d; pass six equally long, "
                .. "non-empty lists"):format(names[i], #rows[i], names[1], #rows[1]))
        end
    end
    -- PyTorch caps num_thresholds at 127 (the plugin data only; weights are not used)
    self:_add(op, self._file, summary.pr_curve(tag, rows, math.min(n, 127)), step, opts.walltime)
end

--- add_audio(tag, snd, step[, {sample_rate = 44100, walltime =}]): a 1-D tensor (after
--- squeeze) in [-1, 1] (clipped), written as 16-bit mono WAV
function SummaryWriter:add_audio(tag, snd, step, opts)
    local op = "add_audio"
    check_tag(op, tag)
    opts = args.options(op, opts, { "sample_rate", "walltime" }, "{sample_rate = 16000}")
    local rate = opts.sample_rate or 44100
    if not (compat.is_integer(rate) and rate >= 1) then
        fail("tide: add_audio: sample_rate must be a positive integer, got " .. tostring(rate))
    end
    if not core.is_tensor(snd) or snd:squeeze():dim() ~= 1 then
        fail("tide: add_audio: expected a tensor of one dimension (after squeeze) of samples")
    end
    local vals = tide.no_grad(function() -- the product in the tensor's dtype, as numpy's
        local x = snd:to("cpu"):squeeze()
        if not x:is_floating_point() then
            x = x:to("float64")
        end
        return x:clamp(-1, 1):mul(32767):to("float64"):totable()
    end)
    for i, v in ipairs(vals) do
        vals[i] = v < 0 and math.ceil(v) or math.floor(v) -- astype("<i2") truncates
    end
    self:_add(op, self._file, summary.audio(tag, vals, rate), step, opts.walltime)
end

--- add_custom_scalars(layout): the custom_scalars plugin's layout, layout =
--- {category = {chart = {"Multiline", {tags}} | {"Margin", {value, lower, upper}}}};
--- categories and charts in sorted order (a Lua table has no insertion order)
function SummaryWriter:add_custom_scalars(layout)
    local op = "add_custom_scalars"
    self:_check_open(op)
    if type(layout) ~= "table" then
        fail("tide: add_custom_scalars: expected a layout table {category = {chart = {\"Multiline\""
            .. ", {tags}}}}, got " .. type(layout))
    end
    local cats = {}
    for _, title in ipairs(sorted_keys(op, layout, "layout", { table = true })) do
        local charts = {}
        for _, ct in ipairs(sorted_keys(op, layout[title], "layout." .. title,
            { table = true })) do
            local spec = layout[title][ct]
            local kind, tags = spec[1], spec[2]
            if (kind ~= "Multiline" and kind ~= "Margin") or type(tags) ~= "table"
                or (kind == "Margin" and #tags ~= 3) then
                fail(("tide: add_custom_scalars: layout.%s.%s must be {\"Multiline\", {tags}} or "
                    .. "{\"Margin\", {value, lower, upper}}"):format(title, ct))
            end
            charts[#charts + 1] = { title = ct, kind = kind, tags = tags }
        end
        cats[#cats + 1] = { title = title, charts = charts }
    end
    self._file:add_event(event_file.event(core._unix_time(), nil,
        pb.bytes(5, summary.custom_scalars(cats), true)))
end

--- add_custom_scalars_multilinechart(tags[, {category = "default", title = "untitled"}])
function SummaryWriter:add_custom_scalars_multilinechart(tags, opts)
    opts = args.options("add_custom_scalars_multilinechart", opts, { "category", "title" },
        "{title = \"loss\"}")
    self:add_custom_scalars({ [opts.category or "default"] = {
        [opts.title or "untitled"] = { "Multiline", tags } } })
end

--- add_custom_scalars_marginchart({value, lower, upper}[, {category = "default", title =
--- "untitled"}])
function SummaryWriter:add_custom_scalars_marginchart(tags, opts)
    opts = args.options("add_custom_scalars_marginchart", opts, { "category", "title" },
        "{title = \"loss\"}")
    self:add_custom_scalars({ [opts.category or "default"] = {
        [opts.title or "untitled"] = { "Margin", tags } } })
end

-- "AddmmBackward0" -> "aten::addmm"
local function op_name(fn)
    local s = tostring(fn):gsub("Backward%d*$", "")
    return "aten::" .. s:sub(1, 1):lower() .. s:sub(2)
end

--- add_graph(model, input_to_model[, {verbose =, use_strict_trace =}]): the model's graph for
--- TensorBoard's Graphs tab. tide has no tracer: the graph is the autograd graph of one call
--- model(input) (or model(unpack(inputs)) for a list), so it shows the ops that have a grad_fn
--- and the parameters they read; input nodes are input/input.<i>, outputs output/output.<i>.
function SummaryWriter:add_graph(model, input_to_model, opts)
    local op = "add_graph"
    self:_check_open(op)
    args.options(op, opts, { "verbose", "use_strict_trace" }, "{verbose = false}")
    local mt = getmetatable(model)
    if not (type(model) == "function" or (type(model) == "table" and (model.__ismodule
        or (mt and mt.__call)))) then
        fail("tide: add_graph: expected a module (or a function) first, got " .. type(model))
    end
    local inputs
    if core.is_tensor(input_to_model) then
        inputs = { input_to_model }
    elseif type(input_to_model) == "table" then
        inputs = input_to_model
    else
        fail("tide: add_graph: input_to_model must be a tensor or a list of tensors, got "
            .. type(input_to_model))
    end
    local names = {}
    if type(model) == "table" and model.named_parameters then
        for name, p in model:named_parameters() do
            names[p] = name
        end
    end
    local scope = type(model) == "table" and model.__name or "model"
    scope = tostring(scope)
    local out = tide.enable_grad(function()
        return { model(unpack(inputs)) }
    end)
    local nodes, seen, count = {}, {}, 0
    for i, x in ipairs(inputs) do
        local n = { name = "input/input." .. i, op = "IO Node" }
        nodes[#nodes + 1] = n
        if core.is_tensor(x) then
            seen[x] = n.name
        end
    end
    local autograd = require("tide.autograd")
    local function visit(fn)
        if seen[fn] then
            return seen[fn]
        end
        local v = rawget(fn, "variable") or fn.variable
        local name, opn
        if tostring(fn) == "AccumulateGrad" and v then
            if seen[v] then
                seen[fn] = seen[v]
                return seen[v]
            end
            count = count + 1
            name, opn = scope .. "/" .. (names[v] or ("parameter." .. count)), "prim::Parameter"
        else
            count = count + 1
            name, opn = scope .. "/" .. tostring(fn) .. "." .. count, op_name(fn)
        end
        seen[fn] = name
        local node = { name = name, op = opn, inputs = {} }
        for _, e in ipairs(autograd.next_functions(fn)) do
            if e[1] then
                node.inputs[#node.inputs + 1] = visit(e[1])
            end
        end
        nodes[#nodes + 1] = node
        return name
    end
    for i, y in ipairs(out) do
        if core.is_tensor(y) then
            local src = y.grad_fn and visit(y.grad_fn) or seen[y]
            nodes[#nodes + 1] = { name = "output/output." .. i, op = "IO Node",
                inputs = src and { src } or {} }
        end
    end
    self._file:add_event(event_file.event(core._unix_time(), nil,
        pb.bytes(4, summary.graph_def(nodes), true)))
end

--- writes every queued record of this writer's files
function SummaryWriter:flush()
    if self._file then
        self._file:flush()
        for _, d in ipairs(self._order) do
            self._writers[d]:flush()
        end
    end
end

--- flushes and closes the files; later adds raise. Also runs at the end of a
--- `local w <close> = SummaryWriter(...)` scope (Lua 5.4); at garbage collection each event file
--- writes its queue and closes itself (event_file.lua).
function SummaryWriter:close()
    if self._file then
        self._file:close()
        self._file = nil
        for _, d in ipairs(self._order) do
            self._writers[d]:close()
        end
    end
end

M._default_log_dir = default_log_dir

return M
