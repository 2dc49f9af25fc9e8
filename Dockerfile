# agent-tty in a container. Build: `docker build -t agent-tty .`; docs/containers.md says how to
# run it and what a container needs for the linux_cgroup plugin.
FROM python:3.12-slim

# What sessions run and agent-tty uses: bash, a pager (less), an editor (vim-tiny, also as `vim`),
# ps (procps), and util-linux (setsid, setpriv). No recommends, no apt lists: a small image.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash less vim-tiny procps util-linux \
 && update-alternatives --install /usr/bin/vim vim /usr/bin/vim.tiny 10 \
 && rm -rf /var/lib/apt/lists/*

# agent-tty from the build context (.dockerignore keeps only what pip needs), with Ghostty's
# screen engine (the `fast` extra) and the MCP SDK (the `mcp` extra: an agent in the container may
# serve `agent-tty mcp`; ADR 0035). The sources are removed once installed.
COPY . /tmp/agent-tty
RUN cd /tmp/agent-tty \
 && pip install --no-cache-dir --disable-pip-version-check --root-user-action=ignore '.[fast,mcp]' \
 && cd / && rm -rf /tmp/agent-tty

# A non-root user runs agent-tty and every session; its Home is private to it (one Home per
# container: sessions never cross containers).
RUN useradd --create-home --uid 1000 --user-group --shell /bin/bash agent
ENV AGENT_TTY_HOME=/home/agent/.agent-tty

# The entrypoint runs the command (CMD, or your agent's) as the user; started as root where
# cgroup2 is writable, it first delegates a cgroup to the user (docker/entrypoint says how).
COPY docker/entrypoint /usr/local/bin/agent-tty-entrypoint

# Non-root by default; the delegation above is opt-in by starting as root.
USER agent
WORKDIR /home/agent
ENTRYPOINT ["/usr/local/bin/agent-tty-entrypoint"]
CMD ["agent-tty", "doctor"]
