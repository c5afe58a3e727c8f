-- tide.nn._signature: PyTorch's constructor signatures for tide.nn's layers, so that a ported
-- call runs as written. A class declares its PyTorch arguments in PyTorch's order
-- (S.define(cls, {names = ..., required = n})); its constructor then takes them positionally,
-- the last of them (or all, the required ones included) in a table by name, as Python's
-- keywords: nn.Conv2d(1, 64, {5, 5}, {1, 1}, {2, 2}), nn.Conv2d(1, 10, {kernel_size = 5}) and
-- nn.Linear({in_features = 4, out_features = 3}). Module's constructor gathers them and calls the
-- class's init in its canonical form, init(required..., {the others by name}) (or, for the
-- classes that take every argument positionally, init(all...)). A class without a signature
-- takes what its init declares: an argument past them raises rather than being dropped.
local compat = require("tide._compat")
local raise = require("tide.autograd.raise")
local core = require("tide.core")
local is_tensor = core.is_tensor
local arity = require("tide.op_args").arity
local no_extra = require("tide.op_args").no_extra

local S = {}

-- init function -> its signature (weak: a class that goes takes its entry along)
local SIGNATURES = setmetatable({}, { __mode = "k" })

-- a table of arguments by name, not a value (a stride {2, 2}, a normalized_shape {4}, an
-- output size with a hole {nil, 7}): tide.pytorch_args's rule
local P = require("tide.pytorch_args")
S.by_name = P.is_options

local function kind(v)
    return is_tensor(v) and "tensor" or type(v)
end

local function plural(n)
    return n == 1 and "" or "s"
end

-- spec: names (PyTorch's, in its order), required (how many lead), and optionally flat (init
-- takes every name positionally: init(a1, ..., an)), legacy(a, n) -> n, {name = value} (tide's
-- own positional forms that differ from PyTorch's: the first n positionals keep PyTorch's
-- meaning, the table names the rest), order(a, n) -> names (the names for these arguments, where
-- PyTorch's order depends on them). Keys by name are checked by init (its options)
--
-- A subclass's super().__init__(*args, **kwargs) is Base.init(self, ...) in Lua: cls.init
-- becomes a wrapper that takes PyTorch's arguments as the constructor does (positionally, the
-- last of them or all in a table by name; the factory device and dtype applied), and passes the
-- canonical form init(required..., {the others by name}) straight on, as before
-- (MaskedConv2d's nn.Conv2d.init(self, 1, 64, 7, 1, 3, {bias = false}) has no bias)
local function canonical(spec, n, last)
    if spec.flat then
        return not (n > 0 and S.by_name(last) and next(last) ~= nil)
    end
    return n <= spec.required or (n == spec.required + 1 and S.by_name(last))
end

function S.define(cls, spec)
    spec.required = spec.required or 0
    local raw = cls.init
    SIGNATURES[raw] = spec
    if type(raw) == "function" then
        local function init(self, ...)
            local n = select("#", ...)
            while n > 0 and select(n, ...) == nil do
                n = n - 1
            end
            if canonical(spec, n, n > 0 and (select(n, ...)) or nil) then
                return raw(self, ...)
            end
            return S.call(self, cls.__name, raw, spec, ...)
        end
        SIGNATURES[init] = spec
        cls.init = init
    end
    return cls
end

function S.of(init)
    return SIGNATURES[init]
end

-- a user's class -> the signature it declared with nn.signature (S.declare)
local CLASS_SIGNATURES = setmetatable({}, { __mode = "k" })
-- a user class's init wrapper (nn.signature's) -> the init it wraps
local RAW_INIT = setmetatable({}, { __mode = "k" })

function S.of_class(cls)
    return CLASS_SIGNATURES[cls]
end

-- Python's literal default (None, True, False, a number, a string, a tuple or list of them)
local function python_literal(who, name, text)
    text = text:match("^%s*(.-)%s*$")
    if text == "None" then
        return nil
    elseif text == "True" or text == "False" then
        return text == "True"
    elseif tonumber(text) then
        return tonumber(text)
    end
    local q = text:match("^'(.*)'$") or text:match('^"(.*)"$')
    if q then
        return q
    end
    local inner = text:match("^%((.*)%)$") or text:match("^%[(.*)%]$")
    if inner then
        local list = {}
        for item in (inner .. ","):gmatch("([^,]*),") do
            if item:match("%S") then
                list[#list + 1] = python_literal(who, name, item)
            end
        end
        return list
    end
    -- a class as the default (DLA's block=BasicBlock, norm_layer=nn.BatchNorm2d): nn.X is tide.nn's
    -- layer (torch.nn.X too, as torchvision's ops/misc.py writes activation=torch.nn.ReLU), a bare
    -- name the Module:extend("Name") class of that name defined before the call
    local layer = text:match("^nn%.([%a_][%w_]*)$") or text:match("^torch%.nn%.([%a_][%w_]*)$")
    local cls
    if layer then
        cls = rawget(require("tide.nn"), layer) or require("tide.nn")[layer]
    elseif text:match("^[%a_][%w_]*$") then
        cls = require("tide.nn._classes")[text]
    end
    if type(cls) == "table" and cls.__ismodule then
        return cls
    end
    raise(("tide: nn.signature: %s: the default %s=%s is not a Python literal (None, True, " ..
        "False, a number, a string or a tuple of them) nor an nn.Module class (nn.X, or a " ..
        "Module:extend(\"%s\") class defined before nn.signature); define it first, or write " ..
        "%s=None and set it in init, as PyTorch's own `if norm_layer is None:` does")
        :format(who, name, text, text, name))
end

-- nn.signature(cls, "inplanes, planes, stride=1, downsample=None, ...") declares a user's class's
-- PyTorch constructor, Python's parameter list as text (self, annotations and a bare * are
-- skipped): cls(...) then takes those arguments positionally, the last of them (or all) in a
-- table by name, as Python's keywords, and calls init(self, each in order) with the defaults
-- filled in. A name it does not list, one given twice or a missing required one raises.
-- With a method name (nn.signature(KAN, "self, x, update_grid=False", "forward")) the text is
-- that method's parameter list instead: cls.method, defined before, is wrapped so that
-- model(x, {update_grid = true}) / m:method(a, {name = v}) take Python's keywords as well.
local call_init
function S.declare(cls, text, method)
    if type(cls) ~= "table" or type(rawget(cls, "__name")) ~= "string" then
        raise("tide: nn.signature: expected a class made by nn.Module:extend(\"Name\") as " ..
            "argument #1, got " .. kind(cls))
    end
    if type(text) ~= "string" then
        raise("tide: nn.signature: expected Python's parameter list as a string (argument #2), " ..
            "as in nn.signature(Block, \"inplanes, planes, stride=1\"), got " .. kind(text))
    end
    if method ~= nil and (type(method) ~= "string" or method == "init") then
        raise("tide: nn.signature: argument #3 must be the name of a method of " .. cls.__name ..
            " such as \"forward\", got " .. (method == "init" and "\"init\" (leave argument #3 " ..
            "out to declare the constructor)" or kind(method)))
    end
    local original = method and cls[method]
    local base = package.loaded["tide.nn.Module"]
    if method and (type(original) ~= "function" or (base and rawequal(original, base[method]) and
            not rawequal(cls, base))) then -- nn.Module's own forward raises: not the user's
        raise(("tide: nn.signature: %s has no method %s (%s); define function %s:%s(...) " ..
            "before nn.signature(%s, ..., %q)"):format(cls.__name, method,
            type(original) == "function" and "only nn.Module's" or "got " .. kind(original),
            cls.__name, method, cls.__name, method))
    end
    local who = method and (cls.__name .. "." .. method) or cls.__name
    local parts, depth, start = {}, 0, 1
    for i = 1, #text + 1 do
        local c = text:sub(i, i)
        if c == "(" or c == "[" then
            depth = depth + 1
        elseif c == ")" or c == "]" then
            depth = depth - 1
        elseif (c == "," and depth == 0) or i == #text + 1 then
            parts[#parts + 1] = text:sub(start, i - 1)
            start = i + 1
        end
    end
    local names, defaults, required, kwargs = {}, {}, 0, nil
    for i, part in ipairs(parts) do
        local name, rest = part:match("^%s*([%a_][%w_]*)%s*(.-)%s*$")
        local kw = part:match("^%s*%*%*%s*([%a_][%w_]*)%s*$")
        if kw then
            -- **kwargs: the names the list does not hold, gathered in a table passed last
            if parts[i + 1] and parts[i + 1]:match("%S") then
                raise(("tide: nn.signature: %s: **%s must be the last parameter (Python's " ..
                    "SyntaxError)"):format(who, kw))
            end
            kwargs, name = kw, nil
        elseif part:match("^%s*%*") then
            if part:match("^%s*%*%s*$") then
                name = nil -- a bare *: what follows is keyword-only, by name here as well
            else
                raise(("tide: nn.signature: %s: %s is not supported; list the parameters by " ..
                    "name"):format(who, part:match("^%s*(.-)%s*$")))
            end
        elseif not name then
            if part:match("%S") then
                raise(("tide: nn.signature: %s: cannot read the parameter %q"):format(who, part))
            end
        end
        if name and name ~= "self" then
            -- an annotation (inp: int = 1) is dropped
            local default = rest:match("=%s*(.*)$")
            names[#names + 1] = name
            if default then
                defaults[name] = python_literal(who, name, default)
            elseif required == #names - 1 then
                required = #names
            else
                raise(("tide: nn.signature: %s: the parameter %s without a default follows " ..
                    "one with a default (Python's SyntaxError)"):format(who, name))
            end
        end
    end
    local spec = { names = names, required = required, flat = true, defaults = defaults,
        kwargs = kwargs }
    if method then
        -- the method's own arguments after self, gathered as the constructor's are
        cls[method] = function(self, ...)
            local o, ordered = S.gather(who, spec, compat.pack(...), select("#", ...))
            return call_init(self, who, original, spec, o, ordered)
        end
        return cls
    end
    CLASS_SIGNATURES[cls] = spec
    -- Python's super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU) from a
    -- subclass is Base.init(self, ...) in Lua: the class's init (defined before or after this
    -- call) becomes a wrapper that takes the arguments as the constructor does, positionally and
    -- the last of them (or all) in a table by name, defaults filled in (without it the table
    -- reached init as its next positional argument); the constructor calls the raw init
    local function wrap(raw)
        raw = RAW_INIT[raw] or raw
        local function init(self, ...)
            local o, ordered = S.gather(who, spec, compat.pack(...), select("#", ...))
            return call_init(self, who, raw, spec, o, ordered)
        end
        RAW_INIT[init] = raw
        return init
    end
    if type(rawget(cls, "init")) == "function" then
        rawset(cls, "init", wrap(rawget(cls, "init")))
    end
    local mt = getmetatable(cls)
    if type(mt) == "table" and rawget(mt, "__newindex") == nil then
        mt.__newindex = function(c, k, v)
            if k == "init" and type(v) == "function" and CLASS_SIGNATURES[c] == spec then
                v = wrap(v)
            end
            rawset(c, k, v)
        end
    end
    return cls
end

-- the signature of a lazy layer: Base's without its first argument (the size read from the
-- first input)
function S.derive(cls, Base)
    local base = SIGNATURES[Base.init]
    if not base then
        return cls
    end
    local legacy = base.legacy
    return S.define(cls, {
        names = compat.move(base.names, 2, #base.names, 1, {}),
        required = math.max(base.required - 1, 0),
        legacy = legacy and function(a, n)
            local b = compat.move(a, 1, n, 2, { false })
            local m, named = legacy(b, n + 1)
            return m and m - 1, named
        end,
    })
end

-- a class without a signature: at most what init declares (self apart), unless it takes `...`
function S.check_init(cls, init, ...)
    -- nn.Identity takes any arguments and ignores them, as PyTorch's
    if type(init) ~= "function" or rawequal(cls, package.loaded["tide.nn.Identity"]) then
        return
    end
    local nparams, vararg = arity(init)
    -- (the Tensor methods' wording, docs/API.md: Conventions; trailing nils are omitted)
    if nparams and not vararg and select("#", ...) >= nparams then
        no_extra(cls.__name, nparams - 1, select(nparams, ...))
    end
end

-- the arguments (a, n) by name: positionals mapped to names, the last argument, a table by name,
-- merged in; a name given both ways raises
function S.gather(who, spec, a, n, offset)
    offset = offset or 0
    while n > 0 and a[n] == nil do
        n = n - 1
    end
    local names = spec.order and spec.order(a, n) or spec.names
    -- a class whose init never took an options table (spec.flat) reads an empty {} as the value
    -- it is (nn.Flatten(1, {}) is refused as before)
    local named = n > 0 and S.by_name(a[n]) and not (spec.flat and next(a[n]) == nil) and a[n] or
        nil
    -- a user class's (nn.signature) dict argument, EfficientNet(cfg) with cfg = {num_blocks = ...}:
    -- a table that names none of the parameters, taking the place of a missing required one, is
    -- that argument's value as Python's dict is
    if named and spec.defaults and n - 1 < spec.required then
        local names_one = false
        for k in pairs(named) do
            if P.position(spec.names, k) then
                names_one = true
                break
            end
        end
        if not names_one then
            named = nil
        end
    end
    local positional = named and n - 1 or n
    local o, extra = {}, nil
    if spec.legacy then
        local m, legacy_named = spec.legacy(a, positional)
        if m then
            positional, extra = m, legacy_named
        end
    end
    if positional > #names then
        local k = #names + 1
        while a[k] == nil do -- the first argument given past them
            k = k + 1
        end
        raise(("tide: %s: expected at most %d argument%s and an options table, got %d " ..
            "(argument #%d is a %s); remove it: %s takes no such argument or option"):format(who,
            #names + offset, plural(#names + offset), n + offset, k + offset, kind(a[k]), who))
    end
    if named and spec.flat and not spec.kwargs then
        core._check_options(named, who, names)
    end
    for i = 1, positional do
        o[names[i]] = a[i]
    end
    for k, v in pairs(extra or {}) do
        o[k] = v
    end
    if named then
        for k, v in pairs(named) do
            if o[k] ~= nil then
                P.twice(who, tostring(k), (P.position(names, k) or positional) + offset)
            end
            o[k] = v
        end
    end
    return o, names
end

-- the arguments after the first `offset` of a call (a forward's masks) by name: names (in
-- PyTorch's order) positionally, the last of them (or all) in a table by name; a table
function S.arguments(who, names, offset, ...)
    return (S.gather(who, { names = names }, compat.pack(...), select("#", ...), offset))
end

-- the parameters that are sizes, counts, dims or indices: Lua's arithmetic makes floats of them
-- (hidden / 2 is 128.0, k ^ 2 is 4.0 in Lua 5.3+), which name the same integer, as the core's
-- own size arguments take them (tide.zeros(2 ^ 2))
local INTEGRAL = {}
for name in ([[in_features out_features in1_features in2_features in_channels out_channels
    kernel_size stride padding output_padding dilation groups num_embeddings embedding_dim
    padding_idx input_size hidden_size num_layers proj_size num_features num_groups
    num_channels normalized_shape embed_dim num_heads nhead d_model dim_feedforward
    num_encoder_layers num_decoder_layers kdim vdim output_size size upscale_factor
    downscale_factor dim start_dim end_dim unflattened_size]]):gmatch("%S+") do
    INTEGRAL[name] = true
end

local function integral_float(x)
    return type(x) == "number" and not compat.is_integer(x) and compat.tointeger(x)
end

-- v with its integral floats (alone or in a list) as integers; anything else as it is
local function integral(v)
    if integral_float(v) then
        return compat.tointeger(v)
    elseif type(v) == "table" and getmetatable(v) == nil then
        local copy
        for i, x in pairs(v) do
            if integral_float(x) then
                copy = copy or compat.move(v, 1, #v, 1, {})
                copy[i] = compat.tointeger(x)
            end
        end
        return copy or v
    end
    return v
end

-- PyTorch's factory arguments (device = None, dtype = None, the last two of a layer with
-- parameters), checked before the layer is built (a bad one draws nothing from the generator):
-- device a device or a device name, dtype a floating one, as PyTorch's initializers need
function S.check_factory(who, device, dtype)
    if device ~= nil then
        local ok, why = pcall(core.device, device)
        if not ok then -- core.device's reason, named for the layer
            raise(("tide: %s: device must be a device or a device name such as \"cpu\" or " ..
                "\"cuda:0\", got %s%s"):format(who, is_tensor(device) and "a tensor" or
                type(device) == "string" and ("%q"):format(device) or type(device),
                type(device) == "string" and (" (" .. tostring(why):gsub("^.-tide: device: ", "")
                .. ")") or ""))
        end
    end
    if dtype ~= nil and not (type(dtype) == "string" and
            require("tide.autograd").FLOAT[dtype]) then
        raise(("tide: %s: dtype must be a floating-point dtype (tide.float32, tide.float64, " ..
            "tide.float16, tide.bfloat16), got %s; the parameters are floating point")
            :format(who, is_tensor(dtype) and "a tensor" or tostring(dtype)))
    end
end

-- the module m, built as usual, moved and cast in place to device and dtype (Module:to, so what
-- holds its parameters and buffers sees the change)
function S.factory(m, device, dtype)
    if device ~= nil or dtype ~= nil then
        m:to({ device = device, dtype = dtype })
    end
    return m
end

-- init(self, o) for the arguments o by name (S.gather's), in init's form
function call_init(self, who, init, spec, o, names)
    if spec.flat then
        local args = {}
        for i, name in ipairs(names) do
            args[i] = o[name]
            o[name] = nil
            if args[i] == nil and spec.defaults then -- a user class's (S.declare)
                args[i] = spec.defaults[name]
                if i <= spec.required then -- Python's TypeError for a missing argument
                    raise(("tide: %s: missing its required argument %s (argument #%d, or {%s =})")
                        :format(who, name, i, name))
                end
            end
        end
        if spec.kwargs then -- Python's **kwargs: every other name, a table (empty when none)
            local kw = {}
            for k, v in pairs(o) do
                kw[k] = v
            end
            args[#names + 1] = kw
            return init(self, compat.unpack(args, 1, #names + 1))
        end
        return init(self, compat.unpack(args, 1, #names))
    end
    local args = {}
    for i = 1, spec.required do
        if o[names[i]] == nil then -- Python's TypeError for a missing positional argument
            raise(("tide: %s: missing its required argument %s (argument #%d, or {%s =})")
                :format(who, names[i], i, names[i]))
        end
        args[i] = o[names[i]]
        o[names[i]] = nil
    end
    if next(o) == nil then
        o = nil
    end
    args[spec.required + 1] = o
    return init(self, compat.unpack(args, 1, spec.required + 1))
end

-- init(self, ...) through the signature spec
function S.call(self, who, init, spec, ...)
    init = RAW_INIT[init] or init
    local o, names = S.gather(who, spec, compat.pack(...), select("#", ...))
    for k, v in pairs(o) do
        if INTEGRAL[k] then
            o[k] = integral(v)
        end
    end
    if not spec.factory then
        return call_init(self, who, init, spec, o, names)
    end
    -- device and dtype apply once init has built the module
    local device, dtype = o.device, o.dtype
    o.device, o.dtype = nil, nil
    S.check_factory(who, device, dtype)
    call_init(self, who, init, spec, o, names)
    S.factory(self, device, dtype)
end

-- a convolution's padding given as PyTorch's string (>= 1.9): "valid" is no padding, "same" pads
-- dilation * (kernel - 1) per dim, half before and the rest (one more when odd) after, as
-- PyTorch's, with stride 1 only. k, d, s: the kernel, dilation and stride per dim. Returns the
-- padding before and after each dim (two lists), or nil when padding is not a string.
function S.conv_padding(who, padding, k, d, s)
    if type(padding) ~= "string" then
        return nil
    end
    local before, after = {}, {}
    if padding == "valid" then
        for i = 1, #k do
            before[i], after[i] = 0, 0
        end
        return before, after
    end
    if padding ~= "same" then
        raise(("tide: %s: unknown padding \"%s\"; use an integer, a size per dim, \"same\" " ..
            "or \"valid\""):format(who, padding))
    end
    for i = 1, #k do
        if s[i] ~= 1 then
            raise(("tide: %s: padding = \"same\" needs stride 1 (PyTorch's rule), got stride " ..
                "%s; give the padding as numbers"):format(who, #s == 1 and tostring(s[1]) or
                "{" .. table.concat(s, ", ") .. "}"))
        end
        local total = d[i] * (k[i] - 1)
        before[i] = compat.idiv(total, 2)
        after[i] = total - before[i]
    end
    return before, after
end

-- F.pad's list (last dim first) for the paddings before and after each dim; nil when each dim's
-- two are equal (the convolution's own symmetric padding does it)
function S.asymmetric_pad(before, after)
    local pad, asym = {}, false
    for i = #before, 1, -1 do
        pad[#pad + 1], pad[#pad + 2] = before[i], after[i]
        asym = asym or before[i] ~= after[i]
    end
    return asym and pad or nil
end

-- the convolutions' names, PyTorch's order
S.CONV = { "in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
    "groups", "bias", "padding_mode", "device", "dtype" }
S.CONV_TRANSPOSE = { "in_channels", "out_channels", "kernel_size", "stride", "padding",
    "output_padding", "groups", "bias", "dilation", "padding_mode", "device", "dtype" }

-- tide's older positional form of a convolution, a boolean bias as argument #at (where
-- PyTorch's dilation or groups goes: neither is a boolean)
function S.conv_legacy(at)
    return function(a, n)
        if n == at and type(a[at]) == "boolean" then
            return at - 1, { bias = a[at] }
        end
    end
end

return S
