-- char_lm_spec.lua — examples/char_lm.lua end to end on a small text with small models (the
-- flags change only the sizes): both models learn in a few steps, a run stopped and resumed
-- from its checkpoint prints the same losses as an uninterrupted one, and sampling is the same
-- under the same seed.

-- runs the example with the checkout's paths; returns its output and exit status
local function run(args)
    local cmd = "LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/lua/?.so;;' TERM=dumb "
        .. "lua5.4 examples/char_lm.lua --device cpu " .. args .. " 2>&1"
    local p = io.popen(cmd)
    local out = p:read("*a")
    local ok = p:close()
    return out, ok
end

-- a text of 8 KB: a few sentences in a fixed pseudo-random order
local function write_text()
    local lines = { "the quick brown fox jumps over the lazy dog.\n",
        "a stitch in time saves nine.\n", "all that glitters is not gold.\n",
        "to be or not to be, that is the question.\n" }
    local parts, x = {}, 7
    while #table.concat(parts) < 8000 do
        x = (x * 1103515245 + 12345) % 2147483648
        parts[#parts + 1] = lines[x % #lines + 1]
    end
    local path = os.tmpname()
    local f = assert(io.open(path, "wb"))
    f:write(table.concat(parts))
    f:close()
    return path
end

local SIZES = {
    lstm = "--model lstm --layers 1 --width 48 --batch-size 8 --lr 1e-2",
    gpt = "--model gpt --layers 1 --width 32 --heads 2 --context 32 --batch-size 8 --lr 1e-2",
}

-- the losses an eval line prints, as text (compared exactly)
local function losses(out, step)
    return out:match("\nstep " .. step .. "/%d+: (train loss [%d.]+, val loss [%d.]+)")
end

-- #lua53: the example is a Lua 5.4 program, run with lua5.4 against the 5.4 build, and these
-- tests read its exit status from popen (5.3+)
describe("examples/char_lm.lua #lua53", function()
    local text
    setup(function()
        text = write_text()
    end)
    teardown(function()
        os.remove(text)
    end)

    for _, kind in ipairs({ "lstm", "gpt" }) do
        it(kind .. ": learns, resumes exactly from a checkpoint, samples reproducibly", function()
            local base = SIZES[kind] .. " --data " .. text .. " --steps 16 --eval-every 8 "
            local full, ok = run(base .. "--sample 40 --prompt 'the '")
            assert.is_true(ok, full)
            assert.matches("^device: cpu\ntext: [^\n]*, 8%d%d%d bytes", full)
            local v8 = tonumber(full:match("\nstep 8/16: [^\n]*val loss ([%d.]+) nats/char"))
            local v16 = tonumber(full:match("\nstep 16/16: [^\n]*val loss ([%d.]+) nats/char"))
            assert.is_not_nil(v8, full)
            assert.is_true(v8 < math.log(30) - 0.2, full) -- below a uniform guess over the 30 bytes
            assert.is_true(v16 < v8 - 0.05, full)     -- and still falling
            assert.are.equal(string.format("%.4f", v16), full:match("\nval loss: ([%d.]+)\n$"))
            local sample = full:match("\nsample %b():\n(the [^\n]*)")
            assert.is_not_nil(sample, full)

            -- stopped at step 8, then resumed to 16: the same losses, the same sample
            local ckpt = os.tmpname() .. ".safetensors"
            local first, ok1 = run(base .. "--sample 0 --stop-at 8 --save " .. ckpt)
            assert.is_true(ok1, first)
            assert.are.equal(losses(full, 8), losses(first, 8))
            assert.is_nil(first:find("step 16/16", 1, true), first)
            local resumed, ok2 = run("--data " .. text .. " --load " .. ckpt ..
                " --sample 40 --prompt 'the ' --save " .. ckpt)
            assert.is_true(ok2, resumed)
            assert.is_nil(resumed:find("step 8/16", 1, true), resumed)
            assert.is_not_nil(losses(full, 16))
            assert.are.equal(losses(full, 16), losses(resumed, 16))
            assert.are.equal(sample, resumed:match("\nsample %b():\n(the [^\n]*)"))

            -- a loaded finished run trains no further and samples the same text again
            local again, ok3 = run("--data " .. text .. " --load " .. ckpt ..
                " --sample 40 --prompt 'the '")
            os.remove(ckpt)
            assert.is_true(ok3, again)
            assert.is_nil(again:find("\nstep ", 1, true), again)
            assert.are.equal(sample, again:match("\nsample %b():\n(the [^\n]*)"))
        end)
    end

    it("refuses an unknown flag, a bad model and a prompt outside the vocabulary", function()
        local out, ok = run("--step 2")
        assert.is_falsy(ok)
        assert.matches("char_lm: unknown argument '%-%-step'", out)
        out, ok = run("--model rnn")
        assert.is_falsy(ok)
        assert.matches("char_lm: %-%-model must be gpt or lstm, got 'rnn'", out)
        out, ok = run(SIZES.lstm .. " --data " .. text .. " --steps 1 --prompt 'Q'")
        assert.is_falsy(ok)
        assert.matches("char_lm: %-%-prompt: byte 81 %('Q'%) never occurs in the text", out)
    end)

    it("reports a missing text in one line, without a traceback", function()
        local out, ok = run("--data /nonexistent/text.txt")
        assert.is_falsy(ok)
        assert.matches("char_lm: [^\n]*tide: data.text: cannot open /nonexistent/text.txt", out)
        assert.is_nil(out:find("stack traceback", 1, true), out)
    end)
end)
