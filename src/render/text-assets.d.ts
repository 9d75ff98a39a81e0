// Shell scripts imported `with { type: "text" }` are embedded into the binary as strings.
declare module "*.sh" {
  const content: string;
  export default content;
}
