from giok.edges.hookline import main

if __name__ == "__main__":
    main()
