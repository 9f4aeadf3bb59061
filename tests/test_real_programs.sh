#!/usr/bin/env bash
# Real programs on kmem: every check runs a stock Debian program twice, on
# glibc's malloc and under LD_PRELOAD=libkmem-malloc.so, and wants the same
# exit status (0) and byte-identical stdout.  The preloaded run also must not
# make kmem report anything (BUG:, WARNING:, kmem: lines on stderr).
#
# Programs: python3 (allocation-heavy script; threads; multiprocessing and
# fork while threads allocate), sqlite3 (50k rows,
# indexes, joins), sort --parallel, xz -T2, gcc (compile src/slab/slub.c, then
# build and run a program), g++ (build under kmem; a C++ program with
# new/delete, containers, shared_ptr and std::thread run on both), perl, awk,
# git, tar+gzip, a program and a library with functions of the kernel API's
# names (and e2fsck, which has some); kmem.stats_at_exit=1 prints /proc/slabinfo at exit; and
# slab_debug=FZPU runs python3 unchanged and reports a program's heap overruns
# and write after free; slab_debug=U with kmem.stats_at_exit=1 names the
# function that leaked a program's blocks (alloc_traces); kmem.live=1 serves
# a running python3's /proc and /sys to tools/kmemctl.
#
# Environment (set by ctest): KMEM_BINARY_DIR, KMEM_SOURCE_DIR, KMEM_SANITIZE.
# Optional: KMEM_RP_ONLY="sqlite3 gcc" runs only the named checks,
# KMEM_RP_BACKENDS="slab" only the named back-ends;
# KMEM_RP_KEEP=1 keeps the temporary directory (outputs in run/NAME.TAG/).
# Exit: 0 all passed, 1 a failure, 77 skipped (sanitizer build, no .so).
set -u

# The slab back-ends to run every program on: adding one is adding its name.
BACKENDS=(${KMEM_RP_BACKENDS:-slub slab slob})

SRC=${KMEM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BIN=${KMEM_BINARY_DIR:-$SRC/build}
SO=$BIN/lib/libkmem-malloc.so
LIMIT=120	# seconds for one run of one check

if [ -n "${KMEM_SANITIZE:-}" ]; then
	echo "skipped: sanitizer build (KMEM_SANITIZE=$KMEM_SANITIZE): LD_PRELOAD of the malloc cannot work"
	exit 77
fi
if [ ! -f "$SO" ]; then
	echo "skipped: $SO not built"
	exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/kmem-real-programs.XXXXXX")
if [ -n "${KMEM_RP_KEEP:-}" ]; then
	echo "keeping $T"
else
	trap 'rm -rf "$T"' EXIT
fi
[ -n "${KMEM_RP_KEEP:-}" ] && echo "keeping $T"
DATA=$T/data
mkdir -p "$DATA"

# Debian's python3, not a shim from PATH (a pyenv shim is a bash script).
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(command -v python3 || true)

# Deterministic programs: no hash randomisation, no user or system config.
export PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1 LC_ALL=C TZ=UTC
export HOME=$T/home GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"
export SRC DATA PYTHON

passed=0
failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
skip() { echo "skip $*"; }

# ---------------------------------------------------------------------------
# Inputs, made once on glibc.

cat >"$DATA/alloc.py" <<'EOF'
import gc, json, hashlib, random, threading, collections

r = random.Random(1234)
h = hashlib.sha256()

def feed(x):
    h.update(repr(x).encode())

# dicts and lists of every size, grown and shrunk
d = {}
for i in range(200000):
    d["k%d" % r.randrange(100000)] = [i] * r.randrange(1, 12)
feed(len(d)); feed(sum(len(v) for v in d.values()))
for k in list(d)[::3]:
    del d[k]
feed(len(d))
lists = [list(range(r.randrange(0, 3000))) for _ in range(2000)]
for l in lists[::2]:
    del l[len(l) // 3:]
feed(sum(map(len, lists)))

# strings: concatenation, join, split, replace, formatting
s = "".join("%06d|" % r.randrange(10**6) for _ in range(100000))
parts = s.split("|")
s2 = "-".join(p[::-1] for p in parts).replace("00", "x")
feed(len(s2)); feed(s2[:100]); feed(s2.count("x"))
big = ["ab" * r.randrange(1, 50000) for _ in range(300)]
feed(sum(map(len, big)))

# json round trip of a nested structure
doc = {"users": [{"id": i, "name": "user%d" % i, "tags": ["t%d" % (i % 7)] * (i % 5),
                  "score": i * 1.5, "nested": {"a": [i, str(i), None, True]}}
                 for i in range(30000)]}
text = json.dumps(doc, sort_keys=True)
back = json.loads(text)
assert back == doc
feed(len(text)); feed(hashlib.md5(text.encode()).hexdigest())

# class-heavy: a tree of objects with __slots__-less instances and cycles
class Node:
    def __init__(self, key, parent=None):
        self.key = key
        self.parent = parent
        self.children = []
        self.data = {"k": key, "s": str(key)}

def build(n):
    root = Node(0)
    nodes = [root]
    for i in range(1, n):
        p = nodes[r.randrange(len(nodes))]
        c = Node(i, p)
        p.children.append(c)
        nodes.append(c)
    return root, nodes

total = 0
for rnd in range(3):
    root, nodes = build(50000)
    total += sum(len(n.children) for n in nodes) + sum(n.key for n in nodes[::7])
    del root, nodes
    total += gc.collect() > 0
feed(total)

# collections, sets, sorting
c = collections.Counter(r.randrange(5000) for _ in range(300000))
feed(c.most_common(5))
st = set(range(0, 200000, 3)) ^ set(range(0, 200000, 5))
feed(len(st)); feed(sorted(st)[-5:])
words = ["%x" % r.getrandbits(40) for _ in range(100000)]
words.sort()
feed(words[:3]); feed(words[-3:])

# threads: each builds and tears down its own structures
results = [None] * 8
def worker(idx):
    rr = random.Random(idx)
    acc = 0
    for _ in range(15):
        m = {rr.randrange(10000): "v" * rr.randrange(200) for _ in range(3000)}
        l = sorted(m.items())
        acc += len(l) + sum(len(v) for _, v in l[:100])
        js = json.loads(json.dumps(m))
        acc += len(js)
    results[idx] = acc
threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
feed(results)

gc.collect()
print("threads", results)
print("digest", h.hexdigest())
EOF

# Processes: multiprocessing pools (fork, spawn, forkserver), and os.fork()
# while three threads allocate (kmem's fork handlers).
cat >"$DATA/fork.py" <<'EOF'
import json, multiprocessing as mp, os, threading

def f(n):
    d = {i: str(i) * (i % 50) for i in range(n)}
    return sum(len(v) for v in d.values())

if __name__ == "__main__":
    for method in ("fork", "spawn", "forkserver"):
        with mp.get_context(method).Pool(4) as pool:
            print(method, sum(pool.map(f, [20000 + i for i in range(32)])))
    stop = False
    def churn():
        while not stop:
            [json.dumps({"a": list(range(100)), "b": "x" * 5000}) for _ in range(100)]
    threads = [threading.Thread(target=churn) for _ in range(3)]
    for t in threads:
        t.start()
    statuses = []
    for i in range(30):
        pid = os.fork()
        if pid == 0:
            y = [str(j) * 10 for j in range(50000)]
            os._exit(0 if len(y) == 50000 and json.loads(json.dumps(y[:1000])) == y[:1000] else 1)
        statuses.append(os.waitpid(pid, 0)[1])
    stop = True
    for t in threads:
        t.join()
    print("forks", len(statuses), "exit statuses", sorted(set(statuses)))
EOF

# sqlite3: a schema, 50k rows in transactions, indexes, joins, aggregates.
"$PYTHON" - "$DATA/script.sql" <<'EOF'
import random, sys
r = random.Random(7)
out = open(sys.argv[1], "w")
w = out.write
w("PRAGMA journal_mode=WAL;\n")
w("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT, city TEXT, since INTEGER);\n")
w("CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, item TEXT, qty INTEGER, price REAL, note TEXT);\n")
cities = ["Paris", "Lyon", "Oslo", "Lima", "Kyiv", "Rome", "Quito", "Accra"]
w("BEGIN;\n")
for i in range(1, 5001):
    w("INSERT INTO customers VALUES(%d,'cust%05d','%s',%d);\n" % (i, i, r.choice(cities), 1990 + r.randrange(35)))
w("COMMIT;\n")
for batch in range(10):
    w("BEGIN;\n")
    for j in range(5000):
        i = batch * 5000 + j + 1
        w("INSERT INTO orders VALUES(%d,%d,'item%03d',%d,%.2f,'%s');\n" % (
            i, 1 + r.randrange(5000), r.randrange(500), 1 + r.randrange(20),
            r.randrange(100, 100000) / 100, "n" * r.randrange(0, 300)))
    w("COMMIT;\n")
w("CREATE INDEX orders_customer ON orders(customer);\n")
w("CREATE INDEX orders_item ON orders(item, qty);\n")
w("CREATE INDEX customers_city ON customers(city);\n")
w("SELECT count(*), sum(qty), printf('%.2f', sum(qty * price)) FROM orders;\n")
w("SELECT c.city, count(*), sum(o.qty), printf('%.2f', avg(o.price)) FROM orders o JOIN customers c ON c.id = o.customer GROUP BY c.city ORDER BY c.city;\n")
w("SELECT item, count(*) AS n FROM orders GROUP BY item ORDER BY n DESC, item LIMIT 10;\n")
w("SELECT c.name, count(o.id), sum(length(o.note)) FROM customers c LEFT JOIN orders o ON o.customer = c.id GROUP BY c.id ORDER BY 2 DESC, 1 LIMIT 10;\n")
w("UPDATE orders SET note = note || note WHERE qty > 15;\n")
w("DELETE FROM orders WHERE price < 50;\n")
w("SELECT count(*), sum(length(note)) FROM orders;\n")
w("SELECT group_concat(name, ',') FROM (SELECT name FROM customers WHERE city = 'Oslo' ORDER BY since DESC, name LIMIT 20);\n")
w("WITH RECURSIVE cnt(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM cnt WHERE x < 20000) SELECT sum(x), max(length(printf('%0*d', x % 100, x))) FROM cnt;\n")
w("VACUUM;\n")
w("PRAGMA integrity_check;\n")
EOF

# sort: 800k random lines, about 20 MiB.
"$PYTHON" - "$DATA/lines" <<'EOF'
import random, sys
r = random.Random(42)
with open(sys.argv[1], "w") as f:
    for i in range(800000):
        f.write("%08x %d %s\n" % (r.getrandbits(32), r.randrange(10**6), "x" * r.randrange(20)))
EOF
# xz: 8 MiB of text, plus the project's sources.
head -c 8000000 "$DATA/lines" >"$DATA/xzin"
cat "$SRC"/src/*/*.c >>"$DATA/xzin"

cat >"$DATA/hello.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
int main(void)
{
	enum { N = 20000 };
	char **v = malloc(N * sizeof(*v));
	unsigned long x = 1, sum = 0;
	for (int i = 0; i < N; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		v[i] = malloc(24);
		snprintf(v[i], 24, "%016lx", x);
	}
	qsort(v, N, sizeof(*v), cmp);
	for (int i = 0; i < N; i++) {
		sum = sum * 31 + (unsigned char)v[i][i % 16];
		free(v[i]);
	}
	free(v);
	printf("hello from gcc: %lx\n", sum);
	return 0;
}
EOF

cat >"$DATA/prog.cc" <<'EOF'
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

struct Shape {
	virtual ~Shape() = default;
	virtual long area() const = 0;
};
struct Rect : Shape {
	long w, h;
	Rect(long w_, long h_) : w(w_), h(h_) {}
	long area() const override { return w * h; }
};
struct Circle : Shape {
	long r;
	std::string label;
	explicit Circle(long r_) : r(r_), label("circle-" + std::to_string(r_)) {}
	long area() const override { return 3 * r * r + (long)label.size(); }
};

static unsigned long work(unsigned seed)
{
	unsigned long x = seed, acc = 0;
	auto next = [&] { x = x * 6364136223846793005UL + 1442695040888963407UL; return x >> 33; };
	for (int round = 0; round < 30; round++) {
		std::vector<std::unique_ptr<Shape>> shapes;
		std::map<std::string, std::shared_ptr<std::vector<int>>> m;
		std::unordered_map<unsigned long, std::string> u;
		for (int i = 0; i < 3000; i++) {
			if (next() % 2)
				shapes.emplace_back(new Rect(next() % 100, next() % 100));
			else
				shapes.push_back(std::make_unique<Circle>(next() % 50));
			auto key = "k" + std::to_string(next() % 2000);
			auto &slot = m[key];
			if (!slot)
				slot = std::make_shared<std::vector<int>>();
			slot->resize(slot->size() + next() % 64, i);
			u[next() % 5000] = std::string(next() % 300, 'a' + i % 26);
		}
		for (auto &s : shapes)
			acc += s->area();
		for (auto &kv : m)
			acc = acc * 7 + kv.second->size() + kv.first.size();
		for (auto &kv : u)
			acc += kv.second.size();
		int *raw = new int[10000]();
		acc += raw[9999];
		delete[] raw;
	}
	return acc;
}

int main()
{
	const int n = 8;
	std::vector<unsigned long> res(n);
	std::vector<std::thread> threads;
	for (int i = 0; i < n; i++)
		threads.emplace_back([i, &res] { res[i] = work(i + 1); });
	for (auto &t : threads)
		t.join();
	/* Objects made in one thread, freed in another. */
	std::vector<std::shared_ptr<std::string>> shared;
	std::mutex mu;
	std::thread maker([&] {
		for (int i = 0; i < 20000; i++) {
			std::lock_guard<std::mutex> g(mu);
			shared.push_back(std::make_shared<std::string>(i % 500, 'z'));
		}
	});
	maker.join();
	std::thread freer([&] { std::lock_guard<std::mutex> g(mu); shared.clear(); shared.shrink_to_fit(); });
	freer.join();
	for (int i = 0; i < n; i++)
		std::printf("thread %d: %lu\n", i, res[i]);
	std::printf("shared left: %zu\n", shared.size());
	return 0;
}
EOF

# The entries to make: the first argument (see INPUT below), 200000 by default.
cat >"$DATA/work.pl" <<'EOF'
use strict; use warnings;
my $n = shift // 200000;
my $x = 12345;
sub rnd { $x = ($x * 1103515245 + 12345) % 2147483648; return $x; }
my %h; my @a;
for my $i (1 .. $n) {
	my $k = sprintf("key%06d", rnd() % 50000);
	push @{ $h{$k} }, $i;
	push @a, join("-", map { rnd() % 1000 } 1 .. (rnd() % 8));
}
my $s = join(",", @a);
my @w = split /,/, $s;
(my $t = $s) =~ s/(\d+)-(\d+)/$2+$1/g;
my %cnt; $cnt{length $_}++ for @w;
my @top = (sort { @{ $h{$b} } <=> @{ $h{$a} } || $a cmp $b } keys %h)[0 .. 4];
print scalar(keys %h), " ", scalar(@w), " ", length($t), "\n";
print join(" ", map { "$_=$cnt{$_}" } sort { $a <=> $b } keys %cnt), "\n";
print join(" ", map { "$_:" . scalar @{ $h{$_} } } @top), "\n";
my @sorted = sort { $a <=> $b } map { rnd() } 1 .. $n / 2;
print "$sorted[0] $sorted[-1] ", scalar(@sorted), "\n";
EOF

# A program and a library with functions of the kernel API's names, as
# kernel code ported to userspace has (e2fsck defines kmem_cache_create,
# kmalloc and kfree): kmem's calls between its own functions must not reach
# theirs, and theirs must not reach kmem's (its version script exports only
# the malloc API and kmem_read/kmem_write).  The library's calls to its own
# functions go through its PLT (-fPIC, no -Bsymbolic), so a preloaded
# alloc_pages() would capture them.
cat >"$DATA/kernames.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct kmem_cache { size_t size; char name[24]; };
struct kmem_cache *kmem_cache_create(const char *name, size_t size, size_t align,
				     unsigned long flags, void (*ctor)(void *))
{
	struct kmem_cache *c = malloc(sizeof(*c));
	(void)align; (void)flags; (void)ctor;
	c->size = size;
	snprintf(c->name, sizeof(c->name), "mine:%s", name);
	return c;
}
void *kmalloc(size_t size, unsigned int flags)
{
	char *p = malloc(size + 16);
	(void)flags;
	memcpy(p, "hdr", 4);
	return p + 16;
}
void kfree(const void *p)
{
	if (p)
		free((char *)p - 16);
}
int lib_pages(void);
int main(void)
{
	struct kmem_cache *c = kmem_cache_create("revoke", 48, 0, 0, NULL);
	char *p = kmalloc(100, 0);
	strcpy(p, "hello");
	printf("%s %s %zu %s\n", c->name, p, c->size, p - 16);
	kfree(p);
	free(c);
	for (int i = 0; i < 3; i++)
		printf("lib_pages: %d of 8192 bytes non-zero\n", lib_pages());
	return 0;
}
EOF
cat >"$DATA/libkn.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
struct page { unsigned char *mem; unsigned int order; };
struct page *alloc_pages(unsigned int gfp, unsigned int order)
{
	struct page *p = malloc(sizeof(*p));
	(void)gfp;
	p->mem = calloc(1, 4096u << order);
	p->order = order;
	return p;
}
void *page_address(const struct page *p) { return p->mem; }
void __free_pages(struct page *p, unsigned int order)
{
	(void)order;
	free(p->mem);
	free(p);
}
int lib_pages(void)
{
	struct page *p = alloc_pages(0, 1);
	unsigned char *m = page_address(p);
	int nz = 0;
	for (int i = 0; i < 8192; i++)
		nz += m[i] != 0;
	memset(m, 0xab, 8192);
	__free_pages(p, 1);
	return nz;
}
EOF

# A small source tree for git and tar.
mkdir -p "$DATA/tree"
cp -r "$SRC/src" "$SRC/include" "$DATA/tree/"
"$PYTHON" - "$DATA/tree" <<'EOF'
import os, random, sys
r = random.Random(3)
os.makedirs(os.path.join(sys.argv[1], "gen"))
for i in range(200):
    with open(os.path.join(sys.argv[1], "gen", "f%03d.txt" % i), "w") as f:
        for j in range(r.randrange(10, 400)):
            f.write("line %d of file %d: %x\n" % (j, i, r.getrandbits(64)))
EOF

# ---------------------------------------------------------------------------
# The checks.  Each runs in its own empty directory and prints to stdout what
# must be the same on glibc and on kmem.  Everything they start inherits
# LD_PRELOAD in the kmem run.

check_python3() {
	"$PYTHON" "$DATA/alloc.py"
}

check_python3_fork() {
	"$PYTHON" "$DATA/fork.py"
}

check_sqlite3() {
	sqlite3 -batch test.db <"$DATA/script.sql"
	sqlite3 -batch test.db 'SELECT count(*), sum(qty) FROM orders;'
}

check_sort() {
	sort --parallel=4 -S 20M -T . "$DATA/lines" | md5sum
	sort --parallel=4 -S 20M -T . -k2,2n -k1,1 "$DATA/lines" | tail -n 3
	sort -u --parallel=2 -S 5M -T . -k3 "$DATA/lines" | md5sum
}

check_xz() {
	xz -T2 -1 -c "$DATA/xzin" >out.xz	# 3 MiB blocks: both threads work
	md5sum <out.xz
	xz -T2 -d -c out.xz | md5sum
	md5sum <"$DATA/xzin"
	xz -l out.xz | tail -n 1
}

check_gcc() {
	gcc -std=gnu11 -O2 -g -D_GNU_SOURCE -pthread -Wall -Wextra \
		-I"$SRC/src" -I"$SRC/include" -c "$SRC/src/slab/slub.c" -o slub.o
	md5sum <slub.o
	gcc -O2 -Wall "$DATA/hello.c" -o hello
	./hello
}

check_gxx_build() {
	g++ -std=c++17 -O2 -pthread -c "$DATA/prog.cc" -o prog.o
	md5sum <prog.o
	g++ -pthread prog.o -o prog
	./prog
}

check_cxx_program() {
	"$DATA/prog"	# built once, on glibc
}

check_perl() {
	perl "$DATA/work.pl" ${KMEM_RP_INPUT:-}
}

check_awk() {
	awk '{ n[$2 % 1000]++; len += length($3); w[substr($1, 1, 3)] = w[substr($1, 1, 3)] $2 "," }
	     END { for (k in n) s += n[k] * k; m = 0; for (k in w) if (length(w[k]) > m) m = length(w[k]);
	           print NR, s, len, m }' "$DATA/lines"
	head -n 200000 "$DATA/lines" |
		awk '{ k = $2 % 1000; a[k] = a[k] " " NR } END { for (k in a) { c++; t += length(a[k]) }; print c, t }'
}

check_git() {
	export GIT_AUTHOR_NAME=kmem GIT_AUTHOR_EMAIL=kmem@example.org
	export GIT_COMMITTER_NAME=kmem GIT_COMMITTER_EMAIL=kmem@example.org
	export GIT_AUTHOR_DATE='2024-01-01T00:00:00Z' GIT_COMMITTER_DATE='2024-01-01T00:00:00Z'
	git init -q -b main repo && cd repo || return 1
	cp -r "$DATA/tree/src" "$DATA/tree/include" .
	git add -A && git commit -q -m "import sources"
	cp -r "$DATA/tree/gen" .
	git add -A && git commit -q -m "add generated files"
	sed -i 's/line/LINE/' gen/f00*.txt
	git rm -q -r include
	git commit -q -a -m "edit and remove"
	git log --format=%s
	git log --format='%H %T'
	git cat-file -p 'HEAD^{tree}'
	git cat-file -p HEAD~1:gen/f001.txt | md5sum
	git diff --stat HEAD~2 HEAD | tail -n 1
	git gc -q --aggressive
	git fsck --strict 2>&1
	git count-objects -v | grep -E '^(count|in-pack|packs)'
}

check_kernel_names() {
	gcc -O1 -fPIC -shared "$DATA/libkn.c" -o libkn.so &&
		gcc -O1 -rdynamic "$DATA/kernames.c" -o kernames -L. -lkn -Wl,-rpath,"$PWD" || return 1
	./kernames
	# The program that showed it (e2fsprogs, in every Debian install).
	local e2fsck
	e2fsck=$(PATH=$PATH:/usr/sbin:/sbin command -v e2fsck) && "$e2fsck" -V 2>&1
	return 0
}

check_tar_gzip() {
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$DATA" -cf - tree |
		gzip -n -6 >tree.tgz
	md5sum <tree.tgz
	mkdir x && tar -C x -xzf tree.tgz
	(cd x && find . -type f | sort | xargs md5sum) | md5sum
	diff -r "$DATA/tree" x/tree && echo same
	gzip -dc tree.tgz | tar -tvf - | wc -l
}

CHECKS=(python3 python3_fork sqlite3 sort xz gcc gxx_build cxx_program perl awk git tar_gzip kernel_names)
export -f "${CHECKS[@]/#/check_}"

# A smaller input for a check on one back-end (check:backend => the check's
# argument, in KMEM_RP_INPUT): the same script, its output compared with
# glibc's on that same input.  perl on SLOB: SLOB searches its list's
# partially free pages, and their free blocks, first fit under one lock, the
# kernel's design for small heaps; perl's hash and arrays leave thousands of
# small-list pages holding only 16- and 32-byte holes (too small for most of
# its requests: a kmalloc block is 32 bytes at least), and every search walks
# them.  The page and block scans per allocation grow with the heap (17 and
# 57 at 50000 entries, 63 and 172 at 200000), and so does the time, faster
# (its pages and holes no longer fit the caches): 1.8 s of CPU at 50000
# entries, 25 s at 100000, 50 s at 200000 against glibc's 1.3 s.
declare -A INPUT=([perl:slob]=50000)

# The program each check needs: a missing one fails its check
# (scripts/install-deps.sh installs them).
declare -A NEED=([python3]=$PYTHON [python3_fork]=$PYTHON [sqlite3]=sqlite3 [sort]=sort
	[xz]=xz [gcc]=gcc [gxx_build]=g++ [cxx_program]=g++ [perl]=perl [awk]=awk [git]=git
	[tar_gzip]=gzip [kernel_names]=gcc)

# run_check NAME TAG [ENV...]: run check_NAME with the given environment in
# $T/work/NAME (the same path for every run: gcc -g records it); leaves out,
# err and rc in $T/run/NAME.TAG.
run_check() {
	local name=$1 tag=$2; shift 2
	local dir=$T/run/$name.$tag cwd=$T/work/$name
	rm -rf "$dir" "$cwd" && mkdir -p "$dir" "$cwd"
	(cd "$cwd" && timeout -k 5 "$LIMIT" env "$@" bash -c "check_$name" \
		>"$dir/out" 2>"$dir/err" </dev/null)
	echo $? >"$dir/rc"
	# Drop the work directory now: the checks make tens of MiB each.
	rm -rf "$cwd"
}

report_failure() {
	local dir=$1
	echo "    exit status $(cat "$dir/rc")$( [ "$(cat "$dir/rc")" = 124 ] && echo " (timed out after ${LIMIT}s)")"
	sed -n '1,15s/^/    stderr: /p' "$dir/err"
}

selected() {
	[ -z "${KMEM_RP_ONLY:-}" ] && return 0
	[[ " $KMEM_RP_ONLY " == *" $1 "* ]]
}

# The C++ program is built once, on glibc.
if command -v g++ >/dev/null; then
	g++ -std=c++17 -O2 -pthread "$DATA/prog.cc" -o "$DATA/prog" ||
		fail "g++ could not build the C++ test program"
fi

start=$SECONDS
# What kmem prints when something is wrong (printk.c): must not appear.
kmem_said='^(BUG|WARNING): |^kmem: |Kernel panic'
echo "real programs on kmem: ${#CHECKS[@]} checks x back-ends: ${BACKENDS[*]}"

# The preload must really take: the library is mapped, and malloc is kmem's.
for b in "${BACKENDS[@]}"; do
	maps=$(LD_PRELOAD=$SO KMEM_CMDLINE="slab=$b" cat /proc/self/maps 2>"$T/maps.err")
	rc=$?
	if [ $rc != 0 ]; then
		fail "preload-maps [$b]: cat exits with status $rc on kmem"
		sed -n '1,5s/^/    stderr: /p' "$T/maps.err"
	elif grep -q 'libkmem-malloc\.so' <<<"$maps"; then
		ok "preload-maps [$b]"
	else
		fail "preload-maps [$b]: libkmem-malloc.so is not mapped into a preloaded cat"
	fi
done

for name in "${CHECKS[@]}"; do
	selected "$name" || continue
	if ! command -v "${NEED[$name]}" >/dev/null; then
		for b in "${BACKENDS[@]}"; do
			fail "$name [$b]: ${NEED[$name]:-its program} is not installed (run scripts/install-deps.sh)"
		done
		continue
	fi

	# glibc's run on each input a back-end uses: the default, and any smaller one.
	declare -A glibc_time=()
	inputs=("")
	for b in "${BACKENDS[@]}"; do
		in=${INPUT[$name:$b]:-}
		[[ " ${inputs[*]} " == *" $in "* ]] || inputs+=("$in")
	done
	ref_failed=
	for in in "${inputs[@]}"; do
		t0=$SECONDS
		run_check "$name" "glibc$in" KMEM_RP_INPUT="$in"
		glibc_time[x$in]=$((SECONDS - t0))
		ref=$T/run/$name.glibc$in
		if [ "$(cat "$ref/rc")" != 0 ] || [ ! -s "$ref/out" ]; then
			ref_failed=1
			report_failure "$ref"
		fi
	done
	if [ -n "$ref_failed" ]; then
		for b in "${BACKENDS[@]}"; do
			fail "$name [$b]: the reference run on glibc itself failed"
		done
		continue
	fi

	for b in "${BACKENDS[@]}"; do
		in=${INPUT[$name:$b]:-}
		ref=$T/run/$name.glibc$in
		t0=$SECONDS
		run_check "$name" "$b" LD_PRELOAD="$SO" KMEM_CMDLINE="slab=$b" KMEM_RP_INPUT="$in"
		kmem_time=$((SECONDS - t0))
		got=$T/run/$name.$b
		rc=$(cat "$got/rc")
		if [ "$rc" != 0 ]; then
			fail "$name [$b]: exit status $rc on kmem, 0 on glibc"
			report_failure "$got"
		elif ! cmp -s "$ref/out" "$got/out"; then
			fail "$name [$b]: stdout differs from glibc's"
			diff "$ref/out" "$got/out" | head -n 20 | sed 's/^/    /'
		elif grep -qE "$kmem_said" "$got/err"; then
			fail "$name [$b]: kmem reported problems"
			grep -E "$kmem_said" "$got/err" | head -n 5 | sed 's/^/    /'
		else
			ok "$name [$b]${in:+ (input $in)} (kmem ${kmem_time}s, glibc ${glibc_time[x$in]}s; $(wc -c <"$got/out") bytes of output)"
		fi
	done
done

# kmem.stats_at_exit=1: the allocator's state is printed as the program ends,
# also by coreutils, whose atexit handler closes stderr before that (kmem
# keeps a copy of it).
if selected stats_at_exit; then
	for b in "${BACKENDS[@]}"; do
		err=$T/stats.$b.err
		out=$(LD_PRELOAD=$SO KMEM_CMDLINE="slab=$b kmem.stats_at_exit=1" \
			timeout "$LIMIT" "$PYTHON" -c 'print(len([str(i) * 5 for i in range(100000)]))' 2>"$err")
		rc=$?
		if [ $rc != 0 ] || [ "$out" != 100000 ]; then
			fail "stats_at_exit [$b]: exit status $rc, stdout '$out'"
			sed -n '1,5s/^/    stderr: /p' "$err"
		elif ! grep -q '^slabinfo - version: 2\.1$' "$err" ||
		     { [ "$b" != slob ] && ! grep -q '^kmalloc-' "$err"; }; then
			fail "stats_at_exit [$b]: no /proc/slabinfo with kmalloc caches on stderr"
			head -n 5 "$err" | sed 's/^/    /'
		elif [ "$b" = slob ] && ! grep -qE '^total [0-9]+ used [0-9]+$' "$err"; then
			# SLOB has no kmalloc caches: its heap's statistics instead.
			fail "stats_at_exit [$b]: no /sys/kernel/debug/slob/stats on stderr"
			head -n 5 "$err" | sed 's/^/    /'
		elif ! grep -q '^==> /proc/meminfo <==' "$err" || ! grep -q '^MemTotal: ' "$err"; then
			fail "stats_at_exit [$b]: no /proc/meminfo on stderr"
			head -n 5 "$err" | sed 's/^/    /'
		else
			ok "stats_at_exit [$b] (/proc/slabinfo and /proc/meminfo printed at exit)"
		fi
		out=$(printf 'b\na\n' | LD_PRELOAD=$SO KMEM_CMDLINE="slab=$b kmem.stats_at_exit=1" \
			timeout "$LIMIT" sort 2>"$err" | tr '\n' ' ')
		if [ "$out" != "a b " ]; then
			fail "stats_at_exit [$b]: sort printed '$out'"
		elif ! grep -q '^slabinfo - version: 2\.1$' "$err" || ! grep -q '^MemTotal: ' "$err"; then
			fail "stats_at_exit [$b]: sort (which closes stderr at exit) printed no report"
			head -n 5 "$err" | sed 's/^/    /'
		else
			ok "stats_at_exit [$b]: also from sort, which closes its stderr at exit"
		fi
		# kmem's copy of stderr: not kept by a fork's child (a daemon would hold its
		# caller's pipe open), and never written once its number is the program's.
		t0=$SECONDS
		out=$(timeout "$LIMIT" env LD_PRELOAD="$SO" KMEM_CMDLINE="slab=$b kmem.stats_at_exit=1" "$PYTHON" -c '
import os, sys, time
if os.fork() == 0:
    os.setsid()
    n = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(n, fd)
    time.sleep(4)
    os._exit(0)
def same_as_stderr(fd):
    try:
        return fd > 2 and os.path.samestat(os.fstat(fd), os.fstat(2))
    except OSError:
        return False        # the descriptor listdir read the directory with
spare = [int(f) for f in os.listdir("/proc/self/fd") if same_as_stderr(int(f))]
f = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
for s in spare:
    os.dup2(f, s)        # the number is the program'"'"'s own file now
print(len(spare))
sys.stdout.flush()
os.close(2)' "$T/stats.mine" 2>&1)
		if [ $((SECONDS - t0)) -ge 3 ]; then
			fail "stats_at_exit [$b]: a forked daemon kept the caller's pipe open ($((SECONDS - t0)) s)"
		elif [ "$out" != 1 ] || [ -s "$T/stats.mine" ]; then
			fail "stats_at_exit [$b]: copies of stderr '$out' (want 1), or the report went into the program's file ($(wc -c <"$T/stats.mine") bytes)"
		else
			ok "stats_at_exit [$b]: its stderr copy is not a fork child's, nor written once the program reuses its number"
		fi
		# With a low fd limit the copy is low (32 of 64): a program that closed every
		# fd, opened files over that number and forked keeps them in the child.
		lost=$( (ulimit -n 64; timeout "$LIMIT" env LD_PRELOAD="$SO" KMEM_CMDLINE="slab=$b kmem.stats_at_exit=1" \
			"$PYTHON" -c '
import os
os.closerange(3, 64)
fds = [os.open("/", os.O_RDONLY) for i in range(40)]
pid = os.fork()
if pid == 0:
    bad = 0
    for fd in fds:
        try: os.fstat(fd)
        except OSError: bad += 1
    os._exit(bad)
print(os.waitpid(pid, 0)[1] >> 8)') 2>/dev/null)
		if [ "$lost" != 0 ]; then
			fail "stats_at_exit [$b]: a fork child lost its own descriptors where the stderr copy had been ($lost)"
		else
			ok "stats_at_exit [$b]: a fork child keeps the files the program opened over the copy's number"
		fi
	done
fi

# slab_debug=FZPU: red zones, poison, consistency checks and user tracking
# on every cache, malloc's included (with U, a block's bytes past its
# request are red zone too: the kernel's kmalloc red zone).  A real program
# runs unchanged (same output as on glibc, no report); a program that
# overruns a block (its slot, or only its request) and writes after a free
# gets the kernel's reports.
if selected slab_debug; then
	cat >"$DATA/heapbug.c" <<-'EOF'
		#include <stdio.h>
		#include <stdlib.h>
		#include <string.h>
		#include <malloc.h>
		int main(void)
		{
			char *p = malloc(100);
			size_t n = malloc_usable_size(p);
			memset(p, 1, n + 1);		/* one byte past the end */
			free(p);
			char *k = malloc(100);
			k[100] = 1;			/* past the request, inside the slot */
			free(k);
			char *a;
			if (posix_memalign((void **)&a, 32, 100))
				return 1;
			a[100] = 1;			/* the same, aligned */
			free(a);
			char *q = malloc(200);
			free(q);
			q[7] = 0x41;			/* after free */
			for (int i = 0; i < 1000; i++)
				free(malloc(200));
			puts("done");
			return 0;
		}
	EOF
	gcc -O0 -w "$DATA/heapbug.c" -o "$DATA/heapbug" || fail "slab_debug: gcc could not build heapbug.c"
	run_check python3 glibc.debug
	for b in "${BACKENDS[@]}"; do
		run_check python3 "$b.debug" LD_PRELOAD="$SO" KMEM_CMDLINE="slab=$b slab_debug=FZPU"
		got=$T/run/python3.$b.debug
		if [ "$(cat "$got/rc")" != 0 ] || ! cmp -s "$T/run/python3.glibc.debug/out" "$got/out" ||
		   grep -qE "$kmem_said" "$got/err"; then
			fail "slab_debug [$b]: python3 under slab_debug=FZPU does not run as on glibc"
			report_failure "$got"
		else
			ok "slab_debug [$b]: python3 under slab_debug=FZPU, same output, no report"
		fi
		err=$T/heapbug.$b.err
		out=$(LD_PRELOAD=$SO KMEM_CMDLINE="slab=$b slab_debug=FZPU" timeout "$LIMIT" "$DATA/heapbug" 2>"$err")
		if [ "$b" = slab ]; then
			# SLAB's reports: red-zone words (the slot's end), poison; it keeps no
			# kmalloc red zone past the request.
			if [ "$out" != done ] ||
			   ! grep -q "^slab error in kmem_cache_free(): cache \`malloc-[0-9]*': memory outside object was overwritten" "$err" ||
			   ! grep -q '^BUG malloc-[0-9]* (Not tainted): Redzone overwritten' "$err" ||
			   ! grep -q '^Slab corruption (Not tainted): malloc-[0-9]* start=0x[0-9a-f]*, len=[0-9]*' "$err" ||
			   ! grep -q '^000: 6b 6b 6b 6b 6b 6b 6b 41 6b' "$err"; then
				fail "slab_debug [$b]: heapbug's overrun and write after free were not both reported"
				sed -n '1,12s/^/    stderr: /p' "$err"
			else
				ok "slab_debug [$b]: an overrun of the slot and a write after free reported as SLAB did"
			fi
			continue
		fi
		if [ "$b" = slob ]; then
			# SLOB: a red zone after every kmalloc's request, checked at free.
			# The aligned block is a kmalloc of 128 bytes (the power of two
			# that is 32-aligned), whose red zone starts at 128: a[100] is
			# inside it.  The write after free is not caught (poison is not
			# checked on reuse: a free block's memory holds the heap's own
			# encoding).
			if [ "$out" != done ] ||
			   [ "$(grep -c '^BUG kmalloc (Not tainted): Right Redzone overwritten' "$err")" != 2 ]; then
				fail "slab_debug [$b]: heapbug's two overruns of a malloc's request were not both reported"
				sed -n '1,12s/^/    stderr: /p' "$err"
			else
				ok "slab_debug [$b]: heapbug's overruns of a malloc's request reported (SLOB checks no poison on reuse)"
			fi
		elif [ "$out" != done ] || ! grep -q '^BUG [a-z]*-[0-9]* (Not tainted): Right Redzone overwritten' "$err" ||
		   [ "$(grep -c '^BUG [a-z]*-[0-9]* (Not tainted): kmalloc Redzone overwritten' "$err")" != 2 ] ||
		   ! grep -q 'Object at 0x[0-9a-f]* not freed' "$err" ||
		   ! grep -q '^BUG [a-z]*-[0-9]* (Not tainted): Poison overwritten' "$err" ||
		   ! grep -q 'First byte 0x41 instead of 0x6b' "$err"; then
			fail "slab_debug [$b]: heapbug's overruns and write after free were not all reported"
			sed -n '1,12s/^/    stderr: /p' "$err"
		else
			ok "slab_debug [$b]: overruns (of the slot, of the request) and a write after free reported as the kernel does"
		fi
	done
fi

# slab_debug=U kmem.stats_at_exit=1: a leak finder.  The program leaks 1000
# blocks from one function; at exit alloc_traces names it (the program is
# linked with -rdynamic, so its dynamic symbol table has the name).
if selected leaks; then
	cat >"$DATA/leaky.c" <<-'EOF'
		#include <stdio.h>
		#include <stdlib.h>
		__attribute__((noinline)) char *leak_here(int i)
		{
			char *p = malloc(100);
			snprintf(p, 100, "block %d", i);
			return p;
		}
		int main(void)
		{
			for (int i = 0; i < 1000; i++)
				leak_here(i);
			free(malloc(100));
			puts("done");
			return 0;
		}
	EOF
	# PIE and not: the main program's sites carry no [object] either way.
	gcc -O1 -rdynamic -w "$DATA/leaky.c" -o "$DATA/leaky" &&
		gcc -O1 -no-pie -rdynamic -w "$DATA/leaky.c" -o "$DATA/leaky-nopie" ||
		fail "leaks: gcc could not build leaky.c"
	for b in "${BACKENDS[@]}"; do
		if [ "$b" = slob ]; then
			skip "leaks [$b]: SLOB keeps no allocation tracks (slab_debug=U: no per-object metadata)"
			continue
		fi
		if [ "$b" != slub ]; then
			ok "leaks [$b]: skipped: alloc_traces (/sys/kernel/debug/slab) is SLUB's"
			continue
		fi
		for prog in leaky leaky-nopie; do
			err=$T/$prog.$b.err
			out=$(LD_PRELOAD=$SO KMEM_CMDLINE="slab=$b slab_debug=U kmem.stats_at_exit=1" \
				timeout "$LIMIT" "$DATA/$prog" 2>"$err")
			# 100 bytes from the 112-byte class: 12 wasted each (the kernel's waste=).
			if [ "$out" != done ] || ! grep -q '^==> /sys/kernel/debug/slab/.*/alloc_traces <==$' "$err" ||
			   ! grep -qE '^   1000 leak_here\+0x[0-9a-f]+/0x[0-9a-f]+ waste=12000/12 age=[0-9/]+ pid=[0-9]+' "$err" ||
			   grep -qE "$kmem_said" "$err"; then
				fail "leaks [$b]: alloc_traces at exit does not name $prog's leak_here with its 1000 blocks"
				grep -A3 'alloc_traces' "$err" | head -n 12 | sed 's/^/    stderr: /'
			else
				ok "leaks [$b]: slab_debug=U names the function that leaked 1000 blocks ($prog)"
			fi
		done
	done
fi

# kmem.live=1: a running program's /proc and /sys through tools/kmemctl
# (src/introspect/live.c); its socket goes when it exits, and kmemctl list
# removes one that nobody answers on.
if selected live; then
	K=$BIN/bin/kmemctl
	sockdir=/tmp/kmem-$(id -u)
	for b in "${BACKENDS[@]}"; do
		if [ ! -x "$K" ]; then
			fail "live [$b]: $K not built"
			continue
		fi
		# The program waits for the test to say it is done (a file), then exits normally.
		timeout "$LIMIT" env LD_PRELOAD="$SO" KMEM_CMDLINE="slab=$b kmem.live=1" "$PYTHON" -c '
import os, sys, time
keep = [str(i) * 40 for i in range(20000)]
blocks = [bytearray(3000) for i in range(300)]
print(os.getpid(), flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
print(len(keep) + len(blocks))' "$T/live.$b.done" >"$T/live.$b.out" 2>"$T/live.$b.err" &
		tpid=$!
		lpid=
		for _ in $(seq 200); do
			lpid=$(head -n 1 "$T/live.$b.out" 2>/dev/null)
			[ -n "$lpid" ] && [ -S "$sockdir/$lpid.sock" ] && break
			sleep 0.05
		done
		why=""
		"$K" list >"$T/live.list" 2>&1 && grep -qE "^ *$lpid  python3" "$T/live.list" ||
			why="kmemctl list does not show it: $(tr '\n' '|' <"$T/live.list")"
		[ -z "$why" ] && { "$K" "$lpid" cat /proc/slabinfo >"$T/live.slabinfo" 2>&1 &&
			head -n 1 "$T/live.slabinfo" | grep -q '^slabinfo - version: 2\.1$' &&
			{ [ "$b" = slob ] || grep -q '^kmalloc-64 ' "$T/live.slabinfo"; } ||
			why="cat /proc/slabinfo: $(head -n 2 "$T/live.slabinfo")"; }
		# SLOB: no kmalloc or malloc caches (one heap); its statistics, holding the 300 blocks.
		if [ "$b" = slob ]; then
			[ -z "$why" ] && { "$K" "$lpid" cat /sys/kernel/debug/slob/stats >"$T/live.slob" 2>&1 &&
				awk '/^slob pages /{a = $11} END{exit !(a >= 300 * 3000)}' \
					"$T/live.slob" || why="slob stats: $(tr '\n' '|' <"$T/live.slob")"; }
			touch "$T/live.$b.done"
			wait "$tpid"
			rc=$?
			[ -z "$why" ] && [ $rc != 0 ] && why="python3 exit status $rc: $(head -n 3 "$T/live.$b.err")"
			[ -z "$why" ] && grep -qE "$kmem_said" "$T/live.$b.err" && why="kmem said: $(head -n 3 "$T/live.$b.err")"
			if [ -n "$why" ]; then
				fail "live [$b]: $why"
			else
				ok "live [$b]: kmemctl cat of /proc/slabinfo and SLOB's statistics on a running python3"
			fi
			continue
		fi
		# malloc-3072 holds the 300 blocks of 3000 bytes (bytearray adds its header);
		# SLAB's slabs make other classes: one of 3000 bytes or more, or kmalloc-4k.
		cls=malloc-3072
		[ "$b" = slab ] && cls='(malloc-(30[1-9][0-9]|3[1-9][0-9][0-9])|kmalloc-4k)'
		[ -z "$why" ] && { "$K" "$lpid" slabtop -l 40 >"$T/live.top" 2>&1 &&
			grep -qE "^ +[0-9]+ +[0-9]+ .* $cls\$" "$T/live.top" ||
			why="slabtop shows no $cls: $(head -n 8 "$T/live.top" | tr '\n' '|')"; }
		# Its caches' memory is their slabs' pages (slab_pages): no more than meminfo's
		# Slab, which also counts large kmallocs (slabs x pagesperslab said 1.7x that).
		[ -z "$why" ] && { awk '/ Caches: /{mib = $5} / MemTotal /{kb = $8}
			END{exit !(mib > 0 && mib * 1024 <= kb + 64)}' "$T/live.top" ||
			why="slabtop's slab memory is over meminfo's Slab: $(head -n 2 "$T/live.top" | tr '\n' '|')"; }
		if [ "$b" = slab ]; then
			# SLAB's tunables are written to /proc/slabinfo; there is no /sys/kernel/slab.
			[ -z "$why" ] && { "$K" "$lpid" write /proc/slabinfo "kmalloc-64 60 30 4" &&
				"$K" "$lpid" cat /proc/slabinfo | grep -qE '^kmalloc-64 .* : tunables   60   30    4 :' ||
				why="a write of kmalloc-64's tunables did not take"; }
			[ -z "$why" ] && { ! "$K" "$lpid" cat /sys/kernel/slab/kmalloc-64/objs_per_slab 2>/dev/null ||
				why="/sys/kernel/slab is there on SLAB"; }
		else
			[ -z "$why" ] && { "$K" "$lpid" write /sys/kernel/slab/kmalloc-64/min_partial 9 &&
				[ "$("$K" "$lpid" cat /sys/kernel/slab/kmalloc-64/min_partial)" = 9 ] ||
				why="write min_partial did not take"; }
			[ -z "$why" ] && { ! "$K" "$lpid" write /proc/slabinfo 1 2>"$T/live.err2" &&
				grep -q 'Permission denied' "$T/live.err2" || why="a write to /proc/slabinfo was not refused"; }
		fi
		# Options in any order; each failed file named; output errors are errors.
		[ -z "$why" ] && { [ "$("$K" "$lpid" slabtop -n 2 -d 0.1 | grep -c '^ Caches: ')" = 2 ] ||
			why="slabtop -n 2 -d 0.1 did not print 2 screens"; }
		[ -z "$why" ] && { ! "$K" "$lpid" slabtop -n 0 2>/dev/null && ! "$K" "$lpid" slabtop -d x 2>/dev/null ||
			why="slabtop took -n 0 or -d x"; }
		[ -z "$why" ] && { ! "$K" "$lpid" cat /proc/nothere /proc/meminfo >"$T/live.two" 2>"$T/live.err3" &&
			grep -q '/proc/nothere: No such file' "$T/live.err3" && grep -q '^MemTotal: ' "$T/live.two" ||
			why="cat of a missing and a present file: $(cat "$T/live.err3")"; }
		if [ -z "$why" ] && [ -w /dev/full ]; then
			"$K" "$lpid" cat /proc/meminfo >/dev/full 2>/dev/null && why="cat >/dev/full exited 0"
		fi
		touch "$T/live.$b.done"
		wait "$tpid"
		rc=$?
		[ -z "$why" ] && [ $rc != 0 ] && why="python3 exit status $rc: $(head -n 3 "$T/live.$b.err")"
		[ -z "$why" ] && [ -e "$sockdir/$lpid.sock" ] && why="its socket is still there after it exited"
		[ -z "$why" ] && grep -qE "$kmem_said" "$T/live.$b.err" && why="kmem said: $(head -n 3 "$T/live.$b.err")"
		if [ -n "$why" ]; then
			fail "live [$b]: $why"
		else
			ok "live [$b]: kmemctl list, cat, slabtop and write on a running python3; socket gone at exit"
		fi
	done
	# A stopped program (^Z, a debugger) whose backlog is full holds up neither
	# kmemctl nor the programs that start serving after it.
	env LD_PRELOAD="$SO" KMEM_CMDLINE="kmem.live=1" "$PYTHON" -c 'import time; time.sleep(60)' &
	spid=$!
	for _ in $(seq 100); do [ -S "$sockdir/$spid.sock" ] && break; sleep 0.05; done
	kill -STOP "$spid"
	t0=$SECONDS
	hung=0
	for _ in $(seq 12); do
		timeout 20 env LD_PRELOAD="$SO" KMEM_CMDLINE="kmem.live=1" /bin/true || hung=$((hung + 1))
	done
	t1=$SECONDS
	timeout 30 "$K" list >/dev/null 2>&1 || hung=$((hung + 1))
	kill -KILL "$spid"; wait "$spid" 2>/dev/null
	if [ $hung != 0 ] || [ $((t1 - t0)) -gt 5 ]; then
		fail "live: a stopped program held up $hung of 13 later programs and kmemctl list ($((t1 - t0)) s for 12 starts)"
	else
		ok "live: a stopped program holds up neither later programs nor kmemctl"
	fi
	# A pre-forking daemon: every fd closed, its own listening socket on our number,
	# workers forked at once.  Each worker keeps that socket.
	lost=$(timeout "$LIMIT" env LD_PRELOAD="$SO" KMEM_CMDLINE="kmem.live=1" "$PYTHON" -c '
import os, socket, sys, time
os.closerange(3, 1024)
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(5)
lost = 0
for i in range(3):
    pid = os.fork()
    if pid == 0:
        try:
            os.fstat(s.fileno()); os._exit(0)
        except OSError:
            os._exit(1)
    lost += os.waitpid(pid, 0)[1] != 0
print(lost)' 2>&1)
	if [ "$lost" != 0 ]; then
		fail "live: workers forked by a daemon lost its listening socket ($lost)"
	else
		ok "live: a daemon's workers keep the listening socket it put on our number"
	fi
	# A socket left by a killed process: nobody answers, kmemctl list removes it.
	"$PYTHON" -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$sockdir/999999999.sock" 2>/dev/null
	"$K" list >/dev/null 2>&1
	if [ -e "$sockdir/999999999.sock" ]; then
		rm -f "$sockdir/999999999.sock"
		fail "live: kmemctl list left a socket nobody answers on"
	else
		ok "live: kmemctl list removes a dead program's socket"
	fi
fi

echo "time: $((SECONDS - start))s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
