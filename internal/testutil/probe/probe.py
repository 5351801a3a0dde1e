"""Try each op=target given and print, as JSON, "allowed" or why not.

The same ops as probe.go's Try (internal/testutil/probe): read, list,
write, tmp, tcp, mptcp, udp, unix (a path, or @name: abstract), loopback,
proxy, ptrace (a pid), seeproc (a pid), privileged. A connection counts only when the server's byte (or echo) comes
back.
"""
import http.client, json, os, socket, sys, threading


def stream(family, addr, proto=0):
    s = socket.socket(family, socket.SOCK_STREAM, proto)
    s.settimeout(5)
    try:
        s.connect(addr)
        if not s.recv(1):
            raise ConnectionError("closed without the server's byte")
    finally:
        s.close()


def hostport(a):
    h, p = a.rsplit(":", 1)
    return h, int(p)


def udp(a):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    try:
        s.sendto(b"hello", hostport(a))
        s.recvfrom(16)
    finally:
        s.close()


def unix(a):
    stream(socket.AF_UNIX, "\0" + a[1:] if a.startswith("@") else a)


def loopback(_):
    l = socket.socket()
    l.bind(("127.0.0.1", 0))
    l.listen(1)
    def answer():
        c, _ = l.accept()
        c.sendall(b"x")
        c.close()
    threading.Thread(target=answer, daemon=True).start()
    try:
        stream(socket.AF_INET, l.getsockname())
    finally:
        l.close()


def proxy(target):
    p = os.environ.get("HTTPS_PROXY", "")
    if not p:
        raise LookupError("no proxy in HTTPS_PROXY")
    c = http.client.HTTPConnection(*hostport(p.split("//", 1)[-1].rstrip("/")), timeout=20)
    c.set_tunnel(*hostport(target))
    c.request("GET", "/through")
    r = c.getresponse()
    if r.status != 200:
        raise ConnectionError("GET through the tunnel: %d" % r.status)


def write(a):
    with open(a, "w") as f:
        f.write("x")


def tmp(_):
    name = os.path.join(os.environ["TMPDIR"], "probe-%d" % os.getpid())
    write(name)
    os.remove(name)


def ptrace(pid):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    if libc.ptrace(0x4206, int(pid), None, None) != 0:  # PTRACE_SEIZE
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    libc.ptrace(17, int(pid), None, None)  # PTRACE_DETACH


def privileged(_):
    for line in open("/proc/self/status"):
        k, _, v = line.rstrip("\n").partition(":\t")
        if k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb") and v.strip("0"):
            return
        if (k == "NoNewPrivs" and v != "1") or (k == "Seccomp" and v != "2"):
            return
    raise PermissionError("no capability, no_new_privs, seccomp")


OPS = {
    "read": lambda a: open(a).read(),
    "list": os.listdir,
    "write": write,
    "tmp": tmp,
    "tcp": lambda a: stream(socket.AF_INET, hostport(a)),
    "mptcp": lambda a: stream(socket.AF_INET, hostport(a), 262),  # IPPROTO_MPTCP
    "udp": udp,
    "unix": unix,
    "loopback": loopback,
    "proxy": proxy,
    "ptrace": ptrace,
    "seeproc": lambda pid: os.stat("/proc/" + pid),
    "privileged": privileged,
}

if "--help" in sys.argv:
    print(__doc__)
    sys.exit(0)
out = {}
for arg in sys.argv[1:]:
    if arg == "--json":
        continue
    op, _, target = arg.partition("=")
    try:
        OPS[op](target)
        out[arg] = "allowed"
    except Exception as e:
        out[arg] = "denied: %s: %s" % (type(e).__name__, e)
print(json.dumps(out))
