-- tide.utils.embedding — the TensorBoard projector's files, as PyTorch 1.13 writes them
-- (torch/utils/tensorboard/_embedding.py and SummaryWriter.add_embedding): tensors.tsv (each value
-- as Python's str(float)), metadata.tsv, sprite.png (a square grid of label_img) and
-- projector_config.pbtxt (protobuf's text format of ProjectorConfig).
local tide = require("tide")
local core = require("tide.core")
local compat = require("tide._compat")
local event_file = require("tide.utils.event_file")
local image = require("tide.utils.image")
local files = require("tide._files")

local M = {}

local fail = require("tide.autograd.raise") -- at the user's line

--- Python's repr of a float: the shortest digits that read back the same double, fixed notation
--- for exponents -4..15 ("0.0001", "1500.0"), scientific beyond ("1e-05", "1.5e+16")
function M.py_float(x)
    if x ~= x then
        return "nan"
    elseif x == math.huge then
        return "inf"
    elseif x == -math.huge then
        return "-inf"
    end
    local s
    for p = 0, 16 do
        s = ("%." .. p .. "e"):format(x)
        if tonumber(s) == x then
            break
        end
    end
    local sign, d1, rest, e = s:match("^(-?)(%d)%.?(%d*)e([-+]%d+)$")
    local digits = (d1 .. rest):gsub("0+$", "")
    if digits == "" then
        digits = "0"
    end
    e = tonumber(e)
    if e >= -4 and e < 16 then
        local int, frac
        if e < 0 then
            int, frac = "0", ("0"):rep(-e - 1) .. digits
        elseif #digits > e + 1 then
            int, frac = digits:sub(1, e + 1), digits:sub(e + 2)
        else
            int, frac = digits .. ("0"):rep(e + 1 - #digits), "0"
        end
        return sign .. int .. "." .. frac
    end
    local m = digits:sub(1, 1) .. (#digits > 1 and "." .. digits:sub(2) or "")
    return ("%s%se%s%02d"):format(sign, m, e < 0 and "-" or "+", math.abs(e))
end

-- Python's str() of a metadata entry
local function py_str(v)
    if type(v) == "number" then
        return compat.is_integer(v) and ("%d"):format(v) or M.py_float(v)
    elseif type(v) == "boolean" then
        return v and "True" or "False"
    end
    return tostring(v)
end

-- SummaryWriter._encode: %, / and \ as %25, %2f, %5c
local function encode(tag)
    return (tag:gsub("%%", "%%25"):gsub("/", "%%2f"):gsub("\\", "%%5c"))
end

local function quote(s)
    return '"' .. s:gsub('[\\"]', "\\%0"):gsub("\n", "\\n") .. '"'
end

--- M.add(log_dir, infos, mat, opts): writes the files of one embedding and the config of all
--- of them so far (infos, the writer's list)
function M.add(log_dir, infos, mat, opts)
    local op = "add_embedding"
    if not core.is_tensor(mat) or mat:dim() ~= 2 then
        fail("tide: add_embedding: mat must be a 2-D tensor (points x dimensions)")
    end
    local n = mat:size(1)
    local step = opts.global_step or 0
    local tag = opts.tag or "default"
    if not compat.is_integer(step) or step < 0 then
        fail(("tide: add_embedding: global_step must be an integer >= 0, got %s")
            :format(tostring(step)))
    end
    if type(tag) ~= "string" then
        fail("tide: add_embedding: tag must be a string, got " .. type(tag))
    end
    local meta = opts.metadata
    if core.is_tensor(meta) then
        meta = meta:to("cpu"):totable()
    end
    if meta ~= nil and (type(meta) ~= "table" or #meta ~= n) then
        fail(("tide: add_embedding: metadata must be a list of %d labels (one per row of mat), "
            .. "got %s"):format(n, type(meta) == "table" and #meta .. " entries" or type(meta)))
    end
    local label_img = opts.label_img
    if label_img ~= nil and (not core.is_tensor(label_img) or label_img:dim() ~= 4
            or label_img:size(1) ~= n) then
        fail(("tide: add_embedding: label_img must be a 4-D tensor (N, C, H, W) with N = %d")
            :format(n))
    end
    local subdir = ("%05d/%s"):format(step, encode(tag))
    local dir = log_dir .. "/" .. subdir
    event_file.makedirs(dir, op)
    if meta ~= nil then
        local lines = {}
        local header = opts.metadata_header
        if header then
            lines[1] = table.concat(header, "\t")
            for i = 1, n do
                local row = {}
                for j, v in ipairs(meta[i]) do
                    row[j] = py_str(v)
                end
                lines[#lines + 1] = table.concat(row, "\t")
            end
        else
            for i = 1, n do
                lines[i] = py_str(meta[i])
            end
        end
        files.write(dir .. "/metadata.tsv", table.concat(lines, "\n") .. "\n", "add_embedding")
    end
    if label_img ~= nil then
        tide.no_grad(function()
            local x = label_img:to("cpu")
            local nrow = math.ceil(math.sqrt(n))
            local grid = image.tb_grid(x, nrow) -- (3, H * rows, W * nrow)
            local side = grid:size(3)
            local square = tide.zeros({ 3, side, side }, { dtype = "float64" })
            square:narrow(2, 1, grid:size(2)):copy_(grid)
            local hwc = square:mul(255):clamp(0, 255):permute(2, 3, 1):to("cpu", "uint8")
            hwc = hwc:contiguous()
            files.write(dir .. "/sprite.png", core._png_encode(hwc), "add_embedding")
        end)
    end
    local rows = mat:to("cpu"):totable()
    local int = mat.dtype:find("int") ~= nil
    local lines = {}
    for i = 1, n do
        local r = rows[i]
        for j = 1, #r do
            local v = r[j]
            r[j] = int and ("%d"):format(v) or type(v) == "boolean" and py_str(v) or M.py_float(v)
        end
        lines[i] = table.concat(r, "\t") .. "\n"
    end
    files.write(dir .. "/tensors.tsv", table.concat(lines), "add_embedding")
    -- EmbeddingInfo in field order: tensor_name 1, metadata_path 2, sprite 5, tensor_path 8
    local info = { "embeddings {", "  tensor_name: " .. quote(("%s:%05d"):format(tag, step)) }
    if meta ~= nil then
        info[#info + 1] = "  metadata_path: " .. quote(subdir .. "/metadata.tsv")
    end
    if label_img ~= nil then
        info[#info + 1] = "  sprite {"
        info[#info + 1] = "    image_path: " .. quote(subdir .. "/sprite.png")
        info[#info + 1] = "    single_image_dim: " .. label_img:size(4)
        info[#info + 1] = "    single_image_dim: " .. label_img:size(3)
        info[#info + 1] = "  }"
    end
    info[#info + 1] = "  tensor_path: " .. quote(subdir .. "/tensors.tsv")
    info[#info + 1] = "}"
    infos[#infos + 1] = table.concat(info, "\n") .. "\n"
    files.write(log_dir .. "/projector_config.pbtxt", table.concat(infos), "add_embedding")
end

return M
