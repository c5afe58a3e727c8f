-- fashion_spec.lua — examples/fashion_mnist.lua end to end: one epoch of the MLP on the first
-- 2,000 training images must beat 0.70 test accuracy (on all 10,000 test images); a checkpoint
-- it saves evaluates to the same accuracy with --load. Pending without dataset-fashion-mnist.
local DIR = "/usr/share/datasets/fashion-mnist"
local host = require("spec.support.host")

local function installed()
    local f = io.open(DIR .. "/train-images-idx3-ubyte.gz", "rb") or io.open(DIR .. "/train-images-idx3-ubyte", "rb")
    if f then f:close() end
    return f ~= nil
end

-- runs the example with the checkout's paths; returns its output and exit status
local function run(args)
    local cmd = "LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='" .. package.cpath .. "' TERM=dumb "
        .. host.lua .. " examples/fashion_mnist.lua " .. args .. " 2>&1"
    local p = io.popen(cmd)
    local out = p:read("*a")
    local ok = p:close()
    return out, ok
end

describe("examples/fashion_mnist.lua", function()
    it("learns: one epoch on 2,000 images beats 0.70, and its checkpoint reloads", function()
        if not installed() then
            pending("dataset-fashion-mnist is not installed (apt-get install dataset-fashion-mnist)")
            return
        end
        local ckpt = os.tmpname() .. ".safetensors"
        local out, ok = run("--subset 2000 --epochs 1 --batch-size 16 --device cpu --save " .. ckpt)
        assert.is_true(ok, out)
        assert.matches("^device: cpu\n", out)
        assert.matches("epoch 1/1 %d+/125 batches", out)              -- plain progress lines
        assert.matches("\nAnkle boot +%d%.%d%d%d%d +1000\n", out)       -- per-class table
        local acc = tonumber(out:match("\ntest accuracy: (0%.%d%d%d%d)\n$"))
        assert.is_not_nil(acc, out)
        assert.is_true(acc > 0.70, "accuracy " .. tostring(acc) .. "\n" .. out)

        local out2, ok2 = run("--device cpu --load " .. ckpt)
        os.remove(ckpt)
        assert.is_true(ok2, out2)
        assert.is_nil(out2:find("epoch 1", 1, true))                   -- evaluation only
        assert.are.equal(acc, tonumber(out2:match("\ntest accuracy: (0%.%d%d%d%d)\n$")))
    end)

    it("learns in mixed precision too (--amp: autocast and a GradScaler)", function()
        if not installed() then
            pending("dataset-fashion-mnist is not installed (apt-get install dataset-fashion-mnist)")
            return
        end
        local out, ok = run("--subset 2000 --epochs 1 --batch-size 16 --device cpu --amp")
        assert.is_true(ok, out)
        local acc = tonumber(out:match("\ntest accuracy: (0%.%d%d%d%d)\n$"))
        assert.is_not_nil(acc, out)
        assert.is_true(acc > 0.70, "accuracy " .. tostring(acc) .. "\n" .. out)
    end)

    it("refuses an unknown flag #lua53", function()
        local out, ok = run("--epoch 2")
        assert.is_falsy(ok)
        assert.matches("unknown argument '%-%-epoch'", out)
    end)

    it("reports a bad --device or --load path in one line, without a traceback #lua53", function()
        for _, args in ipairs({ "--device gpu", "--load /nonexistent/model.safetensors" }) do
            local out, ok = run(args)
            assert.is_falsy(ok)
            assert.matches("fashion_mnist: [^\n]*tide: ", out)
            assert.is_nil(out:find("stack traceback", 1, true), out)
        end
    end)
end)
