// Vite's `?raw` imports: a file's text (docs the tests hold against the code).
declare module "*?raw" {
  const text: string;
  export default text;
}
