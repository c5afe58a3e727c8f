-- tide.onnx: torch.onnx's entry points for ported scripts. tide runs every op eagerly and keeps
-- no graph, so it cannot write an ONNX file: export raises (a ported line fails where it stands
-- rather than leaving no file behind), naming what saves a tide model instead.
-- is_in_onnx_export() is false.
local autograd = require("tide.autograd")
local raise = autograd.raise

local O = {}

local function export(name)
    return function(model)
        local what = type(model) == "table" and model.__ismodule and
            ("the module " .. tostring(rawget(getmetatable(model) or {}, "__name") or "?")) or
            type(model)
        raise(("tide: onnx.%s: tide cannot write ONNX (it runs ops eagerly and records no " ..
            "graph to export; got %s); save the weights with tide.save(model:state_dict(), " ..
            "path) or the whole module with tide.jit.save(model, path), and load them in tide")
            :format(name, what))
    end
end
O.export, O.dynamo_export = export("export"), export("dynamo_export")

function O.is_in_onnx_export()
    return false
end

return O
