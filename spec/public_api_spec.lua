-- public_api_spec.lua — the public namespace is exactly the documented API (issue 28, item 5).
--
-- Enumerates, at run time, the keys of `tide` (its lazy submodules included), of the Tensor
-- method table, of tide.cuda, tide.nn, tide.nn.functional, nn.init, nn.utils, tide.optim,
-- optim.lr_scheduler, optim.swa_utils, tide.amp, tide.data, tide.autograd, tide.func,
-- tide.distributed, tide.text, tide.linalg, tide.utils and tide.models, and fails naming
--   * every public name that docs/API.md does not document, and
--   * every name docs/API.md documents that does not exist: each row of "The op list", and
--     every qualified name written in code (`tide.a.b`, `nn.X`, `F.X`, `dist.X`, `t:X`).
-- Names starting with `_` are internal by convention (the kernels under tide._internal).
--
-- A name counts as documented when docs/API.md writes it in code (between backquotes) with its
-- table's prefix (`tide.zeros`, `nn.Linear`, `F.relu`, `t:numel`, ...; a list such as
-- `nn.init.uniform_ normal_ zeros_` qualifies every word with the first one's prefix), when
-- the op list has it (methods, in-place twins, tide.X functions), or, for a class (a name
-- that starts with a capital), when a code span starts with it (`Linear`, `Conv2d(in, out, k)`).
local tide = require("tide")

local DOC = "docs/API.md"

local function read(path)
    local f = assert(io.open(path, "rb"))
    local s = f:read("*a")
    f:close()
    return s
end

local doc = read(DOC)

-- every code span of the page (a span may wrap lines)
local spans = {}
for s in doc:gmatch("`([^`]+)`") do
    spans[#spans + 1] = s
end

-- ---- the op list: "## The op list", a table | family | `names` | forms | ----
local oplist = doc:match("\n## The op list\n(.-)\n## ") or ""
local op_rows = {} -- { names = {...}, method =, inplace =, fn = } (the forms of the row)
for line in oplist:gmatch("[^\n]+") do
    local cells = {}
    for c in line:gmatch("|([^|]*)") do
        cells[#cells + 1] = c
    end
    if #cells >= 3 and not line:match("^|%s*%-") then
        local names = {}
        for word in (cells[2]:match("`([^`]+)`") or ""):gmatch("[%a_][%w_]*") do
            names[#names + 1] = word
        end
        local forms = cells[3]
        if #names > 0 then
            op_rows[#op_rows + 1] = {
                names = names,
                method = forms:find("`t:X`", 1, true) ~= nil,
                inplace = forms:find("`t:X_`", 1, true) ~= nil,
                fn = forms:find("`tide.X`", 1, true) ~= nil,
            }
        end
    end
end

local op_method, op_fn = {}, {}
for _, row in ipairs(op_rows) do
    for _, n in ipairs(row.names) do
        if row.method then
            op_method[n] = true
        end
        if row.inplace then
            op_method[n .. "_"] = true
        end
        if row.fn then
            op_fn[n] = true
        end
    end
end

-- ---- qualified names written in code ----
-- QUALIFIERS: the prefixes the page writes names with ("tide." reaches every submodule)
local qualified = {} -- "tide.nn.Linear", "t:numel", ... -> true
local function note(q)
    qualified[q] = true
    -- `tide.nn.utils.rnn` also documents tide.nn.utils and tide.nn
    local up = q:match("^(.+)%.[^%.:]+$")
    if up and not qualified[up] then
        note(up)
    end
end
local QUALIFIERS = { "tide%.", "nn%.", "F%.", "dist%.", "t:", "t%.", "optim%.", "data%.",
    "autograd%.", "lr_scheduler%.", "text%.", "linalg%." }
for _, s in ipairs(spans) do
    for _, pre in ipairs(QUALIFIERS) do
        for name, after in s:gmatch("%f[%w_.:]" .. pre .. "([%a_][%w_%.]*)()") do
            name = name:gsub("%.+$", "")
            -- `F.conv*` is a pattern, `tide.X` and `t:X_` placeholders: not names
            if s:sub(after, after) ~= "*" and not name:match("^%u_?$") then
                note((pre:gsub("%%", "")) .. name)
            end
        end
    end
    -- `nn.init.uniform_ normal_ constant_`: the words after a qualified first name share its
    -- prefix
    local first, rest = s:match("^%s*([%a_][%w_]*[%.:][%w_%.:]-)([%a_][%w_]*%s[%a_][%w_%s]*)$")
    if first then
        for word in rest:gmatch("[%a_][%w_]*") do
            note(first .. word)
        end
    end
end

-- a class named in code by itself: `Linear`, `Conv2d(in, out, k)`, `Module:extend`
local classes = {}
for _, s in ipairs(spans) do
    local c = s:match("^%s*(%u[%w_]*)%f[^%w_]")
    if c then
        classes[c] = true
    end
    -- `ReLU LeakyReLU ELU`: a list of classes
    if s:match("^[%w_%s]+$") then
        for word in s:gmatch("%u[%w_]*") do
            classes[word] = true
        end
    end
end

-- the lists of names of one bullet ("- **nn.functional**" ... up to the next bullet)
local function bullet_words(head)
    local text = doc:match("\n%- %*%*" .. head .. "%*%*(.-)\n[%-#]") or ""
    local words = {}
    for s in text:gmatch("`([^`]+)`") do
        if s:match("^[%w_%s]+$") then
            for w in s:gmatch("[%a_][%w_]*") do
                words[w] = true
            end
        else -- `adaptive_avg_pool2d(x, size)`
            local w = s:match("^%s*([%a_][%w_]*)%(")
            if w then
                words[w] = true
            end
        end
    end
    return words
end
local F_LIST = bullet_words("nn%.functional")

-- ---- the tables and how each is written ----
local function lazy_keys(t)
    local mt = getmetatable(t)
    return mt and mt.__lazy or {}
end

-- each table by its path from tide ("" is tide itself); the submodules load on first use
local TABLES = {
    { name = "tide", path = "", prefixes = { "tide." }, op = op_fn, lazy = true },
    { name = "Tensor", path = "Tensor", prefixes = { "t:", "t." }, op = op_method },
    { name = "tide.cuda", path = "cuda", prefixes = { "tide.cuda." } },
    { name = "tide.nn", path = "nn", prefixes = { "nn.", "tide.nn." }, classes = true,
        lazy = true },
    { name = "tide.nn.functional", path = "nn.functional",
        prefixes = { "F.", "nn.functional.", "tide.nn.functional." }, list = F_LIST,
        lazy = true },
    { name = "tide.nn.init", path = "nn.init", prefixes = { "nn.init.", "tide.nn.init." } },
    { name = "tide.nn.utils", path = "nn.utils", prefixes = { "nn.utils.", "tide.nn.utils." },
        lazy = true },
    { name = "tide.optim", path = "optim", prefixes = { "tide.optim.", "optim." },
        classes = true, lazy = true },
    { name = "tide.optim.lr_scheduler", path = "optim.lr_scheduler",
        prefixes = { "tide.optim.lr_scheduler.", "lr_scheduler." }, classes = true },
    { name = "tide.optim.swa_utils", path = "optim.swa_utils",
        prefixes = { "tide.optim.swa_utils.", "swa_utils." }, lazy = true },
    { name = "tide.amp", path = "amp", prefixes = { "tide.amp." }, classes = true, lazy = true },
    { name = "tide.data", path = "data", prefixes = { "tide.data.", "data." }, classes = true },
    { name = "tide.autograd", path = "autograd",
        prefixes = { "tide.autograd.", "autograd." }, lazy = true },
    { name = "tide.func", path = "func", prefixes = { "tide.func." } },
    { name = "tide.distributed", path = "distributed",
        prefixes = { "dist.", "tide.distributed." } },
    { name = "tide.text", path = "text", prefixes = { "tide.text.", "text." }, classes = true },
    { name = "tide.linalg", path = "linalg", prefixes = { "tide.linalg.", "linalg." } },
    { name = "tide.utils", path = "utils", prefixes = { "tide.utils." }, lazy = true },
    { name = "tide.models", path = "models", prefixes = { "tide.models." }, classes = true,
        lazy = true },
    { name = "tide.distributions.transforms", path = "distributions.transforms",
        prefixes = { "tide.distributions.transforms." }, classes = true, lazy = true },
    { name = "tide.distributions.constraints", path = "distributions.constraints",
        prefixes = { "tide.distributions.constraints." }, classes = true },
    { name = "tide.distributions.constraint_registry", path = "distributions.constraint_registry",
        prefixes = { "tide.distributions.constraint_registry." }, classes = true },
}

-- the table at path, or nil and the error that loading it raised
local function table_at(path)
    local ok, t = pcall(function()
        local v = tide
        for part in path:gmatch("[^%.]+") do
            v = v[part]
        end
        return v
    end)
    if not ok then
        return nil, t
    end
    if type(t) ~= "table" then
        return nil, "tide." .. path .. " is a " .. type(t)
    end
    return t
end

local function documented(spec, k)
    for _, p in ipairs(spec.prefixes) do
        if qualified[p .. k] then
            return true
        end
    end
    if spec.op and spec.op[k] then
        return true
    end
    if spec.list and spec.list[k] then
        return true
    end
    if spec.classes and k:match("^%u") and classes[k] then
        return true
    end
    return false
end

local function sorted_keys(spec, t)
    local seen, keys = {}, {}
    for k in pairs(t) do
        if type(k) == "string" and not seen[k] then
            seen[k] = true
            keys[#keys + 1] = k
        end
    end
    for k in pairs(spec.lazy and lazy_keys(t) or {}) do
        if type(k) == "string" and not seen[k] then
            seen[k] = true
            keys[#keys + 1] = k
        end
    end
    table.sort(keys)
    return keys
end

-- resolves "a.b.c" from root; stops (true) at a component starting with "_" (internal)
local function resolve(root, path)
    local v = root
    for part in path:gmatch("[^%.]+") do
        if part:sub(1, 1) == "_" then
            return true
        end
        if type(v) ~= "table" then
            return false
        end
        local ok, r = pcall(function()
            return v[part]
        end)
        if not ok or r == nil then
            return false
        end
        v = r
    end
    return true
end

describe("the public namespace (docs/API.md)", function()
    it("docs/API.md has one op list", function()
        assert.is_true(#op_rows > 10, "no rows found under '## The op list' in " .. DOC)
        local _, n = doc:gsub("\n## The op list\n", "")
        assert.are.equal(1, n)
    end)

    for _, spec in ipairs(TABLES) do
        it("documents every public name of " .. spec.name, function()
            local t, err = table_at(spec.path)
            assert(t, "cannot load " .. spec.name .. ": " .. tostring(err))
            local missing = {}
            for _, k in ipairs(sorted_keys(spec, t)) do
                if k:sub(1, 1) ~= "_" and not documented(spec, k) then
                    missing[#missing + 1] = spec.prefixes[1] .. k
                end
            end
            assert(#missing == 0, #missing .. " public name(s) of " .. spec.name ..
                " not documented in " .. DOC .. ": " .. table.concat(missing, " "))
        end)
    end

    it("every name of the op list exists in the forms its row gives", function()
        local bad = {}
        for _, row in ipairs(op_rows) do
            for _, n in ipairs(row.names) do
                if row.method and type(tide.Tensor[n]) ~= "function" then
                    bad[#bad + 1] = "t:" .. n
                end
                if row.inplace and type(tide.Tensor[n .. "_"]) ~= "function" then
                    bad[#bad + 1] = "t:" .. n .. "_"
                end
                if row.fn and rawget(tide, n) == nil then
                    bad[#bad + 1] = "tide." .. n
                end
            end
        end
        assert(#bad == 0, "the op list of " .. DOC .. " names what does not exist: " ..
            table.concat(bad, " "))
    end)

    it("every qualified name written in code exists", function()
        local ROOTS = {
            ["tide."] = tide, ["nn."] = table_at("nn"), ["F."] = table_at("nn.functional"),
            ["dist."] = table_at("distributed"), ["t:"] = tide.Tensor,
        }
        local bad, names = {}, {}
        for q in pairs(qualified) do
            names[#names + 1] = q
        end
        table.sort(names)
        for _, q in ipairs(names) do
            for pre, root in pairs(ROOTS) do
                if q:sub(1, #pre) == pre and not resolve(root, q:sub(#pre + 1)) then
                    bad[#bad + 1] = q
                end
            end
        end
        assert(#bad == 0, DOC .. " documents names that do not exist: " ..
            table.concat(bad, " "))
    end)

    it("keeps the internal kernels under tide._internal only", function()
        assert.are.equal("table", type(tide._internal))
        for _, k in ipairs({ "im2col", "col2im", "maxpool2d", "maxpool2d_backward",
            "conv2d_backward", "layer_norm_backward", "softmax_backward", "relu_backward",
            "lstm_step" }) do
            assert.are.equal("function", type(tide._internal[k]), k)
            assert.is_nil(rawget(tide, k), "tide." .. k .. " is public")
        end
    end)
end)
