/**
 * Lint: the few rules that catch real bugs in a streaming service (a promise
 * nobody awaits or catches, a value computed and dropped, an `any` that
 * switches the compiler off) on top of typescript-eslint's recommended set.
 * Layout is prettier's job (`.prettierrc.json`), so no style rules here.
 */
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/", ".agui-state/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false, attributes: false } }],
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/no-unused-expressions": "error",
    },
  },
  // The sanitizers match control characters on purpose; that is what they are for.
  {
    rules: {
      "no-control-regex": "off",
      // A subscription read by its own teardown before `subscribe` returns has to be a `let`.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
    },
  },
  // The sandbox page's scripts run in the browser as plain ES modules.
  { files: ["lib/http/sandbox/**/*.js"], languageOptions: { globals: globals.browser } },
  { files: ["*.js", "**/*.mjs"], languageOptions: { globals: globals.node } },
  prettier,
);
