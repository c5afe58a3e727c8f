-- device.lua — the device under test for the device-rule specs (docs/testing.md).
--
--   local D = require("spec.support.device")
--   local x = tide.zeros({2, 3}, {device = D.name})   -- created on the device under test
--   local y = tide.zeros({2, 3}, {device = D.other})  -- a different device, for mismatches
--
-- TIDE_TEST_DEVICE picks the device ("cpu" when unset); run_all.sh runs these specs once more
-- with TIDE_TEST_DEVICE=cpu:1, and a GPU run uses TIDE_TEST_DEVICE=cuda:0. Plain strings: this
-- file does not load tide, so a spec can read it before deciding what to require.
local name = os.getenv("TIDE_TEST_DEVICE") or "cpu"
if name == "cpu:0" then
    name = "cpu"
end

local kind = name:match("^(%a+)")
local other
if kind == "cuda" then
    other = "cpu"
elseif name == "cpu" then
    other = "cpu:1" -- needs TIDE_CPU_DEVICES >= 2, which run_all.sh sets
else
    other = "cpu"
end

return {
    name = name,         -- "cpu", "cpu:1", "cuda:0"
    kind = kind,         -- "cpu" or "cuda"
    other = other,       -- a device different from name
    is_host = name == "cpu", -- cpu:0: the only device whose tensors totable() accepts
}
