"""The words the command judge reads a lesson's runs by: which programs install, run or fetch what, which
of their options take a value, and which paths are the agent's own controls — the tables of
`command_parts.py`, kept apart from the judging so that either can be read in one sitting.

Cost: constants and a handful of compiled patterns, built once on import (with `command_parts`).
"""

from __future__ import annotations

import re

from . import commands_read as cr

# Installers' and runners' names: a prose clause starting with one is read as a command.
NODE = frozenset(("npm", "pnpm", "yarn", "bun", "cnpm"))
NODE_INSTALL = frozenset(("add", "i", "in", "ins", "inst", "insta", "instal", "install", "isntall", "isnt", "it",
                          "install-test", "link", "ln"))
NODE_RUN = frozenset(("dlx", "exec", "x", "create", "init"))
RUNNERS = frozenset(("npx", "bunx", "pnpx", "uvx", "pipx"))
MANAGERS = {  # program → the subcommands that install what follows
    "gem": ("install",), "brew": ("install", "reinstall", "tap", "upgrade"), "apt": ("install",),
    "apt-get": ("install",), "dnf": ("install",), "yum": ("install",), "apk": ("add",), "pacman": ("-s", "-sy", "-syu"),
    "zypper": ("install", "in"), "snap": ("install",), "choco": ("install",), "scoop": ("install",),
    "winget": ("install",), "port": ("install",), "pkg": ("install",), "flatpak": ("install",),
    "composer": ("require",), "bundle": ("add",), "conda": ("install", "create"), "mamba": ("install", "create"),
    "micromamba": ("install", "create"), "poetry": ("add",), "pdm": ("add",), "rye": ("add", "install"),
    "hatch": (), "nix-env": ("-i", "--install", "-ia"), "opam": ("install",), "stack": ("install",),
    "cabal": ("install",), "luarocks": ("install",), "cpan": (), "cpanm": (), "helm": ("install",),
    "krew": ("install",), "asdf": ("plugin",), "mise": ("use", "install"), "volta": ("install",),
    "sdk": ("install",), "conan": ("install",), "vcpkg": ("install",), "julia": (),
}
ALWAYS = frozenset(("cpan", "cpanm"))  # every argument is a package
PROGRAMS = frozenset((*NODE, *RUNNERS, *MANAGERS, *cr.SHELLS, *cr.INTERPRETERS, *cr.FETCHERS, "pip", "uv", "cargo",
                     "go", "docker", "podman", "git", "dotnet", "mix", "env", "sudo", "doas", "xargs", "busybox",
                     "source", "eval", "exec", "nohup", "timeout", "chmod", "tee", "ace", "claude", "dig", "nslookup",
                     "host", "ping", "drill"))
PIP_VALUE = frozenset(("-r", "-c", "-e", "-t", "-i", "-f", "--requirement", "--constraint", "--editable", "--target",
                       "--index-url", "--extra-index-url", "--find-links", "--prefix", "--root", "--src",
                       "--python", "-p", "--from", "--with", "--with-requirements", "--trusted-host", "--cache-dir",
                       "--default-index", "--index", "--directory", "--project", "--package", "--extra", "--group",
                       "--upgrade-package", "-P", "--constraints", "--overrides", "--spec", "--suffix"))
NODE_VALUE = frozenset(("-p", "--package", "-c", "--call", "--prefix", "-C", "--dir", "--cwd", "-w", "--workspace",
                        "--filter", "-F", "--registry", "--cache", "--userconfig", "--tag", "--loglevel"))
DOCKER_VALUE = frozenset(("-e", "-v", "-p", "-w", "-u", "-l", "-m", "--name", "--network", "--entrypoint", "--env",
                          "--volume", "--publish", "--platform", "--user", "--mount", "--workdir", "--env-file",
                          "--label", "--memory", "--cpus", "--hostname", "--add-host", "--device", "--cap-add",
                          "--cap-drop", "--security-opt", "--restart", "--pull", "--runtime", "--gpus", "-h",
                          "--ulimit", "--tmpfs", "--shm-size", "--log-driver", "--network-alias", "--dns"))
GIT_VALUE = frozenset(("--depth", "--branch", "-b", "--origin", "-o", "--config", "-c", "--reference", "--filter",
                       "--jobs", "-j", "--template", "--separate-git-dir", "--shallow-since", "-u", "--upload-pack"))
REGISTRY = frozenset(("--registry", "--index-url", "--extra-index-url", "--index", "--default-index",
                      "--find-links", "--trusted-host", "--source", "--extra-index", "--pypi-mirror"))
PIP = frozenset(("pip", "pip3", "uv", "uvx", "pipx", "python", "poetry", "pdm", "conda", "mamba", "micromamba"))
PIP_REGISTRY = frozenset(("-i", "-f"))  # pip's short forms of --index-url and --find-links
STDIN_FILES = frozenset(("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"))
CODE_FLAGS = {"python": ("-c", "-m"), "perl": ("-e", "-E"), "ruby": ("-e",), "node": ("-e", "-p", "--eval", "--print"),
              "nodejs": ("-e", "-p"), "php": ("-r",), "deno": ("eval",), "bun": ("-e", "--eval"), "lua": ("-e",),
              "pwsh": ("-c", "-command", "-f", "-file"), "powershell": ("-c", "-command", "-f", "-file"),
              "osascript": ("-e",)}
MODIFY = frozenset(("mv", "rm", "cp", "ln", "tee", "sed", "perl", "truncate", "touch", "unlink", "rmdir", "chmod",
                    "chown", "install", "rsync", "dd", "shred", "vi", "vim", "nano", "code", "echo", "printf", "cat"))
STARTUP = re.compile(r"(?:^|/)\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|zshenv|"
                     r"zlogin|kshrc|cshrc|tcshrc|inputrc)$|(?:^|/)(?:\.config/fish/config\.fish|etc/profile|"
                     r"etc/bash\.bashrc|etc/zshrc|etc/environment)$")
CREDENTIALS = re.compile(r"(?:^|/)\.(?:netrc|git-credentials|pgpass|my\.cnf)$|\.ssh(?:/|$)|"
                         r"\.aws/(?:credentials|config)|\.docker/config\.json|\.kube/config|\.gnupg(?:/|$)|\.config/gh/hosts\.yml|"
                         r"(?:~|\$home|\$\{home\})/\.(?:npmrc|pypirc|yarnrc|gemrc|cargo/credentials)")
CLAUDE = re.compile(r"(?:^|/)\.claude(?:/|$|\.json$)|(?:^|/)claude_desktop_config\.json$|(?:^|/)\.ace\.toml$")
URL = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?([^/:?#]+)|^[\w.-]+@([\w-]+(?:\.[\w-]+)+):")
URLS = re.compile(r"(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,31}://[^\s'\"`)>]+")  # a scheme starts a word: linear
DOWNLOAD_WORDS = re.compile(r"\b(?:download\w*|fetch\w*|grab\w*|save\w* (?:it|the \w+)|curl|wget)\b")
PATH_LIKE = re.compile(r"^(?:\.{1,2}(?:/|$)|/|~|file:|git\+file|[\w.-]+\.(?:txt|toml|cfg|in|lock|json|whl|tar\.gz|"
                       r"tgz|zip)$)")
GO_LOCAL = re.compile(r"^(?:\.{1,2}(?:/|$)|[\w-]+\.go$|-)")
