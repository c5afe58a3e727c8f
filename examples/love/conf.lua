-- conf.lua — LÖVE 11 configuration. TIDE_LOVE_HEADLESS=1 (make test) turns the window, graphics
-- and sound off: the game then runs with no X server, the agent acting and learning all the same.
function love.conf(t)
    t.identity = "tide-catch"
    t.version = "11.4"
    t.window.title = "tide: a policy network learns to catch"
    t.window.width, t.window.height = 480, 360
    if os.getenv("TIDE_LOVE_HEADLESS") == "1" then
        t.window = false
        t.modules.window = false
        t.modules.graphics = false
        t.modules.audio = false
        t.modules.sound = false
        t.modules.joystick = false
        t.modules.touch = false
    end
end
