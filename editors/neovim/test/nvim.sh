#!/usr/bin/env bash
# Prints the path of an nvim >= 0.9 for the tests, provisioning one if needed.
#
# Debian 12 ships Neovim 0.7.2, too old for vim.lsp.start. When no nvim on
# PATH is new enough, this fetches Debian 13 (trixie)'s neovim packages with
# apt-get download (a private apt state under $NVIM_HOME; the system's
# sources and packages are untouched), unpacks them with dpkg -x together
# with trixie's libc, and writes a wrapper that runs nvim through that
# libc's loader. Child processes (loom-lsp, git) run on the system's libc.
#
#   NVIM=$(editors/neovim/test/nvim.sh) editors/neovim/test/run.sh
set -euo pipefail

if command -v nvim >/dev/null 2>&1 && nvim --headless -u NONE -c 'if has("nvim-0.9") | qa! | else | cq | endif' >/dev/null 2>&1; then
	command -v nvim
	exit 0
fi

home=${NVIM_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/loom-test-nvim}
wrapper=$home/nvim
if [[ -x $wrapper ]] && "$wrapper" --headless -u NONE -c 'qa!' >/dev/null 2>&1; then
	echo "$wrapper"
	exit 0
fi
if ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null || [[ $(dpkg --print-architecture) != amd64 ]]; then
	echo "nvim.sh: no nvim >= 0.9 and no Debian amd64 apt to fetch one" >&2
	exit 1
fi

mkdir -p "$home"/apt/{lists/partial,cache/archives/partial} "$home/debs" "$home/root"
# The Debian mirror this machine's apt is already configured with.
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[[ -n $mirror ]] || mirror=$(awk '/^deb / && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
if [[ -z $mirror ]]; then
	echo "nvim.sh: no Debian mirror configured in /etc/apt" >&2
	exit 1
fi
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" >"$home/apt/sources.list"
apt=(-o "Dir::Etc::sourcelist=$home/apt/sources.list" -o Dir::Etc::sourceparts=/dev/null
	-o "Dir::State::Lists=$home/apt/lists" -o "Dir::Cache=$home/apt/cache"
	-o Dir::State::status=/var/lib/dpkg/status -o APT::Sandbox::User=root)
apt-get "${apt[@]}" -qq update >&2
(cd "$home/debs" && apt-get "${apt[@]}" -qq download \
	neovim neovim-runtime libluajit-5.1-2 libluajit-5.1-common libmsgpack-c2 libtree-sitter0.22 \
	libunibilium4 libuv1t64 libvterm0 lua-lpeg lua-luv libutf8proc3 libc6 libgcc-s1 >&2)
for d in "$home"/debs/*.deb; do dpkg -x "$d" "$home/root"; done
root=$home/root
cat >"$wrapper" <<WRAP
#!/bin/sh
export VIMRUNTIME="$root/usr/share/nvim/runtime"
exec "$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$root/usr/lib/x86_64-linux-gnu" "$root/usr/bin/nvim" "\$@"
WRAP
chmod +x "$wrapper"
"$wrapper" --version | head -1 >&2
echo "$wrapper"
