# The service image (worker and API); the sandbox image is separate (sandbox/).
# The Node LTS in .node-version (CI runs the same).
FROM node:24.21.0-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
# npm install's postinstall applies these to the installed packages.
COPY patches ./patches
RUN npm install --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY prompts ./prompts
COPY web ./web
COPY migrations ./migrations
COPY tsconfig.json ./
# The workflow bundle a worker starts on, built into node_modules/.cache now: the image's user
# cannot write there, and the worker's build id (TEMPORAL_WORKER_BUILD_ID=auto) names this code.
COPY scripts/bundle-workflows.ts ./scripts/
RUN node bin/run-ts.mjs scripts/bundle-workflows.ts --cache
ENV NODE_ENV=production
# jemalloc for the worker and API (ALLOCATOR=auto finds it; src/infra/allocator.ts): glibc's malloc
# keeps what the native threads (Temporal Core, V8's helpers, libuv) free. With ALLOCATOR=system,
# two malloc arenas instead of glibc's eight per core keep less of it
# (docs/scaling-and-deploys.md, Running more workers).
RUN apt-get update && apt-get install -y --no-install-recommends libjemalloc2 && rm -rf /var/lib/apt/lists/*
ENV MALLOC_ARENA_MAX=2
# Chromium for pages that render their text with JavaScript (docs/tools.md, "Pages that need a
# browser"): left out by default (a few hundred MB); `--build-arg WITH_CHROMIUM=true` adds Debian's,
# and the image's workers then poll the browser queue (BROWSER=auto finds it on PATH).
ARG WITH_CHROMIUM=false
RUN if [ "$WITH_CHROMIUM" = "true" ]; then \
      apt-get update && apt-get install -y --no-install-recommends chromium && rm -rf /var/lib/apt/lists/*; \
    fi
USER node
ENTRYPOINT ["node", "bin/deep-research.mjs"]
CMD ["worker"]
