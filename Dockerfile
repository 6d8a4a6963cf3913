# The service image (worker and API); the sandbox image is separate (sandbox/).
FROM node:20-bookworm-slim
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
ENV NODE_ENV=production
USER node
ENTRYPOINT ["node", "bin/deep-research.mjs"]
CMD ["worker"]
