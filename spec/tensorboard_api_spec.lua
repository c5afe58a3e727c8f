-- tide.utils.tensorboard.SummaryWriter's API against PyTorch 1.13's torch.utils.tensorboard
-- (the methods and options spec/tensorboard_spec.lua does not cover): the Summary bytes each
-- call writes, equal to PyTorch's (pasted from /tmp/tensorboard_api/py.py: torch's summary.*
-- functions' SerializeToString(), and a purge_step run's events read raw with wall_time 0).
local tide = require("tide")
local core = require("tide.core")
local tb = require("tide.utils.tensorboard")
local event_file = require("tide.utils.event_file")
local pb = require("tide.utils.protobuf")

local SummaryWriter = tb.SummaryWriter

-- PyTorch 1.13's bytes
local PT = {
  scalar_new = "\10\29\10\4\108\111\115\115\66\8\8\1\42\4\0\0\0\63\74\11\10\9\10\7\115\99\97\108\97"
    .. "\114\115",
  scalar_new_dp =
    "\10\33\10\4\108\111\115\115\66\12\8\2\50\8\0\0\0\0\0\0\224\63\74\11\10\9\10\7\115\99"
    .. "\97\108\97\114\115",
  hist_auto = "\10\151\1\10\1\104\42\145\1\9\0\0\0\0\0\0\8\192\17\0\0\0\0\0\0\30\64\25\0\0\0\0\0\0"
    .. "\36\64\33\0\0\0\0\0\128\45\64\41\0\0\0\0\0\132\88\64\50\48\0\0\0\0\0\0\8\192\204\204"
    .. "\204\204\204\204\236\191\52\51\51\51\51\51\243\63\104\102\102\102\102\102\10\64\154"
    .. "\153\153\153\153\153\21\64\0\0\0\0\0\0\30\64\58\48\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\64"
    .. "\0\0\0\0\0\0\16\64\0\0\0\0\0\0\0\64\0\0\0\0\0\0\240\63\0\0\0\0\0\0\240\63",
  hist_maxbins =
    "\10\118\10\1\104\42\113\9\0\0\0\0\0\0\8\192\17\0\0\0\0\0\0\30\64\25\0\0\0\0\0\0\36"
    .. "\64\33\0\0\0\0\0\128\45\64\41\0\0\0\0\0\132\88\64\50\32\76\84\159\2\35\131\21\196"
    .. "\209\47\216\30\42\62\166\191\209\47\216\30\42\62\166\63\76\84\159\2\35\131\21\68\58"
    .. "\32\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\64\0\0\0\0\0\0\240\63\0\0\0\0\0\0\28\64",
  hist_int_maxbins =
    "\10\151\1\10\1\104\42\145\1\9\0\0\0\0\0\0\8\192\17\0\0\0\0\0\0\30\64\25\0\0\0\0\0\0"
    .. "\36\64\33\0\0\0\0\0\128\45\64\41\0\0\0\0\0\132\88\64\50\48\0\0\0\0\0\0\8\192\204\204"
    .. "\204\204\204\204\236\191\52\51\51\51\51\51\243\63\104\102\102\102\102\102\10\64\154"
    .. "\153\153\153\153\153\21\64\0\0\0\0\0\0\30\64\58\48\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\64"
    .. "\0\0\0\0\0\0\16\64\0\0\0\0\0\0\0\64\0\0\0\0\0\0\240\63\0\0\0\0\0\0\240\63",
  hist_raw = "\10\102\10\1\104\42\97\9\0\0\0\0\0\0\8\192\17\0\0\0\0\0\0\30\64\25\0\0\0\0\0\0\36\64"
    .. "\33\0\0\0\0\0\128\47\64\41\0\0\0\0\0\244\86\64\50\24\0\0\0\0\0\0\0\0\0\0\0\0\0\0\240"
    .. "\63\0\0\0\0\0\0\30\64\58\24\0\0\0\0\0\0\0\64\0\0\0\0\0\0\20\64\0\0\0\0\0\0\8\64",
  pr_raw = "\10\111\10\2\112\114\66\86\8\1\18\8\18\2\8\6\18\2\8\3\42\72\0\0\128\64\0\0\64\64\0\0"
    .. "\128\63\0\0\64\64\0\0\128\63\0\0\0\0\0\0\0\0\0\0\0\64\0\0\64\64\0\0\0\0\0\0\128\63\0"
    .. "\0\64\64\37\73\18\63\0\0\64\63\0\0\128\63\0\0\128\63\0\0\64\63\0\0\128\62\74\17\10"
    .. "\15\10\9\112\114\95\99\117\114\118\101\115\18\2\16\3",
  custom = "\10\141\1\10\24\99\117\115\116\111\109\95\115\99\97\108\97\114\115\95\95\99\111\110"
    .. "\102\105\103\95\95\66\93\8\7\18\0\66\87\18\40\10\6\84\97\105\119\97\110\18\30\10\4"
    .. "\116\119\115\101\18\22\10\9\116\119\115\101\47\48\48\53\48\10\9\116\119\115\101\47"
    .. "\50\51\51\48\18\43\10\3\85\83\65\18\36\10\3\100\111\119\26\29\10\27\10\7\100\111\119"
    .. "\47\97\97\97\18\7\100\111\119\47\98\98\98\26\7\100\111\119\47\99\99\99\74\18\10\16"
    .. "\10\14\99\117\115\116\111\109\95\115\99\97\108\97\114\115",
  audio = "\10\83\10\1\97\50\78\13\0\0\250\69\16\1\24\6\34\56\82\73\70\70\48\0\0\0\87\65\86\69"
    .. "\102\109\116\32\16\0\0\0\1\0\1\0\64\31\0\0\128\62\0\0\2\0\16\0\100\97\116\97\12\0\0"
    .. "\0\0\0\255\63\1\192\255\127\1\128\255\31\42\9\97\117\100\105\111\47\119\97\118",
  events = {
    "\26\13\98\114\97\105\110\46\69\118\101\110\116\58\50\82\46\10\44\116\101\110\115\111"
      .. "\114\98\111\97\114\100\46\115\117\109\109\97\114\121\46\119\114\105\116\101\114\46"
      .. "\101\118\101\110\116\95\102\105\108\101\95\119\114\105\116\101\114",
    "\16\5\26\13\98\114\97\105\110\46\69\118\101\110\116\58\50",
    "\16\5\58\2\8\1",
    "\16\6\42\28\10\26\10\1\120\66\8\8\1\42\4\0\0\128\63\74\11\10\9\10\7\115\99\97\108\97"
      .. "\114\115",
    "\16\1\42\104\10\102\10\1\104\42\97\9\0\0\0\0\0\0\8\192\17\0\0\0\0\0\0\30\64\25\0\0\0"
      .. "\0\0\0\36\64\33\0\0\0\0\0\128\47\64\41\0\0\0\0\0\244\86\64\50\24\0\0\0\0\0\0\0\0\0\0"
      .. "\0\0\0\0\240\63\0\0\0\0\0\0\30\64\58\24\0\0\0\0\0\0\0\64\0\0\0\0\0\0\20\64\0\0\0\0\0"
      .. "\0\8\64",
    "\42\71\10\69\10\24\99\117\115\116\111\109\95\115\99\97\108\97\114\115\95\95\99\111"
      .. "\110\102\105\103\95\95\66\21\8\7\18\0\66\15\18\13\10\1\65\18\8\10\1\98\18\3\10\1\120"
      .. "\74\18\10\16\10\14\99\117\115\116\111\109\95\115\99\97\108\97\114\115",
  },
}

local function tmpdir()
    local p = os.tmpname()
    os.remove(p)
    assert(core._mkdir(p))
    return p
end

-- the events of the one event file in dir, each without its wall time (field 1, first)
local function events_of(dir)
    local h = io.popen("ls '" .. dir .. "'/events.out.tfevents.*")
    local path = h:read("*l")
    h:close()
    local evs = assert(event_file.read(path))
    for i, e in ipairs(evs) do
        evs[i] = e:sub(1, 1) == "\9" and e:sub(10) or e
    end
    return evs, path
end

-- the Summary (Event field 5) of the last record a writer in a fresh dir wrote with f(w)
local function summary_of(f)
    local dir = tmpdir()
    local w = SummaryWriter(dir)
    f(w)
    w:close()
    local evs = events_of(dir)
    os.execute("rm -rf '" .. dir .. "'")
    for _, fld in ipairs(pb.decode(evs[#evs])) do
        if fld.num == 5 then
            return fld.value
        end
    end
    error("no summary in the last event")
end

local VALS = { 0.5, -1.25, 3.0, 2.0, 0.0, 7.5, -3.0, 1.0, 1.0, 4.0 }

describe("tensorboard API against PyTorch 1.13", function()
    it("has PyTorch's methods and attributes", function()
        local dir = tmpdir()
        local w = SummaryWriter(dir)
        for _, m in ipairs({ "add_audio", "add_custom_scalars", "add_custom_scalars_marginchart",
            "add_custom_scalars_multilinechart", "add_embedding", "add_graph", "add_histogram",
            "add_histogram_raw", "add_hparams", "add_image", "add_images", "add_pr_curve",
            "add_pr_curve_raw", "add_scalar", "add_scalars", "add_text", "close", "flush",
            "get_logdir" }) do
            assert.equal("function", type(w[m]), m)
        end
        assert.equal(dir, w:get_logdir())
        assert.equal(dir, w.log_dir)
        -- PyTorch's defaults; purge_step is None once __init__ opened the file
        assert.equal(10, w.max_queue)
        assert.equal(120, w.flush_secs)
        assert.equal("", w.filename_suffix)
        assert.is_nil(w.purge_step)
        w:close()
        os.execute("rm -rf '" .. dir .. "'")
    end)

    it("add_scalar new_style and double_precision", function()
        assert.equal(PT.scalar_new, summary_of(function(w)
            w:add_scalar("loss", 0.5, 1, { new_style = true })
        end))
        assert.equal(PT.scalar_new_dp, summary_of(function(w)
            w:add_scalar("loss", tide.tensor({ 0.5 }), 1, { new_style = true,
                double_precision = true })
        end))
    end)

    it("add_histogram bins = \"auto\", max_bins, an int with max_bins", function()
        local x = tide.tensor(VALS, { dtype = "float64" })
        assert.equal(PT.hist_auto, summary_of(function(w)
            w:add_histogram("h", x, 1, { bins = "auto" })
        end))
        assert.equal(PT.hist_maxbins, summary_of(function(w)
            w:add_histogram("h", x, 1, { max_bins = 3 })
        end))
        assert.equal(PT.hist_int_maxbins, summary_of(function(w)
            w:add_histogram("h", VALS, 1, { bins = 10, max_bins = 4 })
        end))
        local ok, err = pcall(function()
            summary_of(function(w) w:add_histogram("h", x, 1, { bins = "doane" }) end)
        end)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("tide: add_histogram: bins must be", 1, true))
    end)

    it("add_histogram_raw", function()
        assert.equal(PT.hist_raw, summary_of(function(w)
            w:add_histogram_raw("h", -3.0, 7.5, 10, 15.75, 91.8125, { 0.0, 1.0, 7.5 },
                { 2, 5, 3 }, 1)
        end))
        local ok, err = pcall(function()
            summary_of(function(w) w:add_histogram_raw("h", 0, 1, 2, 1, 1, { 1 }, { 1, 1 }) end)
        end)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("tide: add_histogram_raw: bucket_limits has 1 values "
            .. "and bucket_counts 2", 1, true))
    end)

    it("add_pr_curve_raw", function()
        assert.equal(PT.pr_raw, summary_of(function(w)
            w:add_pr_curve_raw("pr", { 4, 3, 1 }, { 3, 1, 0 }, { 0, 2, 3 }, { 0, 1, 3 },
                { 4 / 7, 0.75, 1.0 }, { 1.0, 0.75, 0.25 }, 1, 3)
        end))
    end)

    it("add_custom_scalars (categories and charts in sorted order)", function()
        assert.equal(PT.custom, summary_of(function(w)
            w:add_custom_scalars({
                Taiwan = { twse = { "Multiline", { "twse/0050", "twse/2330" } } },
                USA = { dow = { "Margin", { "dow/aaa", "dow/bbb", "dow/ccc" } } } })
        end))
    end)

    it("add_audio (16-bit WAV, truncated as numpy's astype)", function()
        assert.equal(PT.audio, summary_of(function(w)
            w:add_audio("a", tide.tensor({ 0.0, 0.5, -0.5, 1.0, -1.0, 0.25 }), 1,
                { sample_rate = 8000 })
        end))
    end)

    it("purge_step's events, walltime and the records of a run", function()
        local dir = tmpdir()
        local w = SummaryWriter(dir, { purge_step = 5 })
        w:add_scalar("x", 1.0, 6, { new_style = true, walltime = 100.0 })
        w:add_histogram_raw("h", -3.0, 7.5, 10, 15.75, 91.8125, { 0.0, 1.0, 7.5 }, { 2, 5, 3 },
            1, 100.0)
        w:add_custom_scalars({ A = { b = { "Multiline", { "x" } } } })
        w:close()
        local evs, path = events_of(dir)
        assert.same(PT.events, evs)
        local raw = event_file.read(path)
        assert.equal(100.0, pb.read_double(pb.decode(raw[4])[1].value))
        os.execute("rm -rf '" .. dir .. "'")
    end)

    for _, why in ipairs({
        "add_figure (matplotlib), add_video (moviepy), add_onnx_graph (onnx): no Lua counterpart",
        "add_mesh: PyTorch 1.13's own mesh() raises TypeError with tensorboard 2.18 in the "
            .. "venv, so there are no reference bytes",
        "add_image_with_boxes: not written yet (needs box drawing on the image)",
        "add_hparams' hparam_domain_discrete: not written yet",
        "an add after close(): PyTorch reopens a new event file, tide raises "
            .. "(spec/tensorboard_spec.lua asserts the raise)",
        "file_writer, all_writers, default_bins: PyTorch's internals, not mirrored",
    }) do
        it("difference left: " .. why:match("^[^:]*"), function()
            pending(why)
        end)
    end

end)

